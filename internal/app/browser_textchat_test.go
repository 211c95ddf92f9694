package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// countMicrophone makes every page the browser opens count its
// getUserMedia calls in window.micCalls, so that a test can tell that text
// mode never asks for the microphone.
func countMicrophone(t *testing.T, ctx context.Context) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.micCalls = 0;
if (navigator.mediaDevices) {
  const gum = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  navigator.mediaDevices.getUserMedia = (c) => { window.micCalls++; return gum(c); };
}`})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
}

// pollFor is poll with a deadline of d: for what must happen "at once".
func pollFor(t *testing.T, ctx context.Context, d time.Duration, what, expr string) {
	t.Helper()
	if err := pollExpr(ctx, expr, d, 50*time.Millisecond); err != nil {
		t.Fatalf("waiting %v for %s: %v", d, what, err)
	}
}

// A visitor types before pressing "Start talking": the
// message starts a text session (the provider's text modality) with no
// microphone, on a page whose Permissions-Policy forbids the microphone,
// and the sandbox's answer comes as text, with no line about
// audio packets. The channel hides the transcript; text chat shows it all
// the same, since the answers are only there. On a page that allows the
// microphone, "Start talking" then turns the chat into a voice session that
// continues the same conversation: the lines stay, the earlier messages
// reach the provider, and the microphone is asked for once.
func TestWidgetTypingStartsTextChat(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	countMicrophone(t, ctx)
	site := newSDKSite(t, true, map[string]any{"color": "#0f766e", "show_text_chat": true})
	tag := fmt.Sprintf(`<script async src="%s/chat-widget.js" data-public-key="%s" data-open></script>`, site.s.URL, site.key)
	html := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head><body><h1>Acme shop</h1>` + tag + `</body></html>`
	site.pages["/"] = html
	site.pages["/nomic"] = html
	shots := shotDir(t)
	root := shadow
	typeText := func(text string) {
		eval[any](t, ctx, `(r => { r.querySelector("form.text input").value = `+js(text)+`; r.querySelector("form.text").requestSubmit(); })(`+root+`)`)
	}

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(480, 720), chromedp.Navigate(site.host.URL+"/nomic")); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the open panel with text chat", `(h => !!h && !h.shadowRoot.querySelector(".panel").hidden && !h.shadowRoot.querySelector("form.text").hidden && h.style.getPropertyValue("--c") !== "")(document.querySelector("svc-chat"))`)
	if st := eval[string](t, ctx, root+`.querySelector(".status").textContent`); !strings.Contains(st, "type") {
		t.Errorf("the idle status %q does not say the visitor may type", st)
	}
	typeText("Where is my order?")
	// The answer comes with no microphone and no audio packets (below),
	// however long a loaded machine takes: no deadline of its own.
	poll(t, ctx, "the typed line and the sandbox's text answer", root+`.querySelector("ol").innerText.includes("You wrote \u201cWhere is my order?\u201d")`)
	poll(t, ctx, "the tool's answer", root+`.querySelector("ol").innerText.includes("shipped on March 3")`)
	tr := eval[string](t, ctx, root+`.querySelector("ol").innerText`)
	if strings.Contains(tr, "audio packets") || !strings.Contains(tr, "Where is my order?") {
		t.Errorf("text chat transcript:\n%s", tr)
	}
	if n := eval[float64](t, ctx, `window.micCalls`); n != 0 {
		t.Errorf("text chat called getUserMedia %v times", n)
	}
	if n := site.s.App.Sandbox.RTPPackets(); n != 0 {
		t.Errorf("text chat sent %d audio packets", n)
	}
	if st := eval[string](t, ctx, root+`.querySelector(".status").textContent`); strings.Contains(st, "Listening") {
		t.Errorf("text chat status %q", st)
	}
	if e := eval[string](t, ctx, root+`.querySelector(".error").hidden ? "" : `+root+`.querySelector(".error").textContent`); e != "" {
		t.Errorf("text chat shows the error %q", e)
	}
	screenshot(t, ctx, shots, "widget-text-chat.png")
	eval[any](t, ctx, root+`.querySelector(".end").click()`)
	poll(t, ctx, "the text chat's end", `document.querySelector("svc-chat").dataset.state === "ended"`)

	// Typed first, then "Start talking": a voice session continues.
	if err := chromedp.Do(ctx, chromedp.Navigate(site.host.URL+"/")); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the open panel", `(h => !!h && !h.shadowRoot.querySelector("form.text").hidden && h.style.getPropertyValue("--c") !== "")(document.querySelector("svc-chat"))`)
	typeText("Do you ship to Norway?")
	poll(t, ctx, "the text answer", root+`.querySelector("ol").innerText.includes("You wrote \u201cDo you ship to Norway?\u201d")`)
	poll(t, ctx, "the tool's answer by text", root+`.querySelector("ol").innerText.includes("shipped on March 3")`)
	calls := site.s.App.Sandbox.Calls()
	eval[any](t, ctx, root+`.querySelector(".talk").click()`)
	poll(t, ctx, "the voice session's greeting", root+`.querySelector("ol").innerText.includes("agentline sandbox")`)
	poll(t, ctx, "the microphone's packets", root+`.querySelector("ol").innerText.includes("audio packets received")`)
	if got := site.s.App.Sandbox.Calls() - calls; got != 1 {
		t.Errorf("Start talking opened %d calls, want 1", got)
	}
	if n := eval[float64](t, ctx, `window.micCalls`); n != 1 {
		t.Errorf("getUserMedia called %v times, want once, for the voice session", n)
	}
	tr = eval[string](t, ctx, root+`.querySelector("ol").innerText`)
	if !strings.Contains(tr, "Do you ship to Norway?") {
		t.Errorf("the voice session lost the text chat's lines:\n%s", tr)
	}
	if msgs := strings.Join(site.s.App.Sandbox.Messages(), "\n"); strings.Count(msgs, "Do you ship to Norway?") != 2 {
		t.Errorf("the voice session's provider did not get the earlier messages; messages received:\n%s", msgs)
	}
	if live := eval[string](t, ctx, `document.querySelector("svc-chat").dataset.state`); live != "listening" && live != "speaking" {
		t.Errorf("state %q after Start talking", live)
	}
	screenshot(t, ctx, shots, "widget-text-then-voice.png")
	eval[any](t, ctx, root+`.querySelector(".talk").click()`)
	poll(t, ctx, "the end", `document.querySelector("svc-chat").dataset.state === "ended"`)
}
