package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// formFixture is a server with a project, an agent, and the owner's token.
type formFixture struct {
	s       *apptest.Server
	tok     string
	project agentline.Project
	agent   agentline.Agent
}

func newFormFixture(t *testing.T, env map[string]string) formFixture {
	t.Helper()
	f := formFixture{s: apptest.StartFresh(t, store.SQLite, env)}
	_, f.tok = f.s.NewUser(t, "owner@example.com")
	f.s.Must(t, 201, "POST", "/api/projects", f.tok, map[string]any{"name": "Acme", "branding": map[string]string{"display_name": "Acme help"}}, &f.project)
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project.ID)+"/agents", f.tok, map[string]string{"name": "Ada", "instructions": "You help Acme's customers."}, &f.agent)
	return f
}

func (f formFixture) leads(t *testing.T) []agentline.Lead {
	t.Helper()
	var list struct{ Leads []agentline.Lead }
	f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads", f.tok, nil, &list)
	return list.Leads
}

// text reads a node's text through the DOM, which works with the page's
// scripts switched off.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	a, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	if err != nil {
		t.Fatalf("%s of %s: %v", name, sel, err)
	}
	return a.Value
}

// The form page works with JavaScript off: a native POST answers the page
// again with the field's error and what was typed, then the thank-you
// page; the lead is stored. With JavaScript on, the same happens without
// leaving the page.
func TestFormPageInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	f := newFormFixture(t, nil)
	var c agentline.Channel
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project.ID)+"/channels", f.tok, map[string]any{"type": "form", "name": "Talk to sales",
		"settings": map[string]any{"form": map[string]any{"submit_label": "Request a call", "thank_you_message": "Thanks! Ada will call you back today.",
			"fields": []map[string]any{
				{"name": "name", "label": "Name", "required": true},
				{"name": "email", "label": "Email", "type": "email", "required": true},
				{"name": "topic", "label": "Topic", "type": "select", "options": []string{"Pricing", "A demo"}},
				{"name": "message", "label": "Message", "type": "textarea"},
				{"name": "consent", "label": "You may contact me about this request", "type": "checkbox", "required": true},
			}}}}, &c)
	page := f.s.URL + "/api/channels/form/embed/" + itoa(c.ID)
	shots := screenshotDir(t)

	// JavaScript off.
	noScript := func(off bool) {
		t.Helper()
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off}); err != nil {
			t.Fatal(err)
		}
	}
	noScript(true)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(520, 760), chromedp.Navigate(page),
		chromedp.SendKeys(chromedp.CSS("#f-name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.CSS("#f-email"), "ada@example"),
		chromedp.SetValue(chromedp.CSS("#f-topic"), "A demo"),
		chromedp.SendKeys(chromedp.CSS("#f-message"), "Please call after 5."),
		chromedp.Click(chromedp.CSS("#f-consent")),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#e-email:not(:empty)")),
	); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#e-email"); got != "Email must be an email address, such as name@example.com." {
		t.Errorf("email error %q", got)
	}
	if attr(t, ctx, "#f-email", "aria-invalid") != "true" || attr(t, ctx, "#f-email", "aria-describedby") != "e-email" {
		t.Error("the email input is not marked invalid and described by its error")
	}
	if got := attr(t, ctx, "#f-name", "value"); got != "Ada Lovelace" {
		t.Errorf("name kept as %q", got)
	}
	if got := attr(t, ctx, "#f-email", "value"); got != "ada@example" {
		t.Errorf("email kept as %q", got)
	}
	if got := text(t, ctx, "#f-message"); got != "Please call after 5." {
		t.Errorf("message kept as %q", got)
	}
	if got := text(t, ctx, "#f-topic option[selected]"); got != "A demo" {
		t.Errorf("topic kept as %q", got)
	}
	if got := text(t, ctx, "#summary"); !strings.Contains(got, "Please correct") {
		t.Errorf("summary %q", got)
	}
	if n := len(f.leads(t)); n != 0 {
		t.Fatalf("%d leads stored from an invalid form", n)
	}
	screenshot(t, ctx, shots, "form-errors.png")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#f-email"), kb.End+".com"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#thanks")),
	); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#thanks"); got != "Thanks! Ada will call you back today." {
		t.Errorf("thank-you page says %q", got)
	}
	screenshot(t, ctx, shots, "form-thanks.png")
	leads := f.leads(t)
	if len(leads) != 1 || leads[0].Answers["email"] != "ada@example.com" || leads[0].Answers["topic"] != "A demo" ||
		leads[0].Answers["consent"] != true || leads[0].Answers["message"] != "Please call after 5." {
		t.Fatalf("stored leads %+v", leads)
	}

	// JavaScript on: errors and thanks without a reload.
	noScript(false)
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, shots, "form-page.png")
	eval[any](t, ctx, `window.marker = 1`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#f-name"), "Grace"),
		chromedp.SendKeys(chromedp.CSS("#f-email"), "grace@"),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
	); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the email error", `document.getElementById("e-email").textContent.includes("must be an email address")`)
	if eval[string](t, ctx, `document.getElementById("e-consent").textContent`) != "You may contact me about this request must be checked." {
		t.Errorf("consent error %q", eval[string](t, ctx, `document.getElementById("e-consent").textContent`))
	}
	if eval[string](t, ctx, `document.activeElement.id`) != "f-email" {
		t.Error("focus is not on the first field in error")
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#f-email"), kb.End+"example.com"),
		chromedp.Click(chromedp.CSS("#f-consent")),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
	); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the thank-you message", `(p => !!p && p.textContent === "Thanks! Ada will call you back today.")(document.getElementById("thanks"))`)
	if eval[float64](t, ctx, `window.marker || 0`) != 1 {
		t.Error("the page was reloaded: the script did not send the form")
	}
	if n := len(f.leads(t)); n != 2 {
		t.Errorf("%d leads, want 2", n)
	}
}

// A live chat form gate: the widget mounted without agentId shows the form,
// sends it, and then talks to the sandbox provider, whose session carries
// the lead's answers in its instructions. The same gate runs in the
// embed-widget iframe page.
func TestFormGateInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	f := newFormFixture(t, map[string]string{"AGENTLINE_SANDBOX": "true"})
	var c agentline.Channel
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project.ID)+"/channels", f.tok, map[string]any{"type": "form", "name": "Chat with us",
		"agent_id": f.agent.ID, "settings": map[string]any{"color": "#7c3aed", "show_transcript": true, "form": map[string]any{"mode": "live_chat",
			"submit_label": "Start chat", "fields": []map[string]any{
				{"name": "name", "label": "Your name", "required": true},
				{"name": "email", "label": "Email", "type": "email", "required": true},
				{"name": "order", "label": "Order number"},
			}}}}, &c)
	var key struct{ Key string }
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, gatePage(f.s.URL, key.Key, f.project.ID, c.ID))
	}))
	defer host.Close()
	f.s.Must(t, 201, "POST", "/api/channels/"+itoa(c.ID)+"/key", f.tok, map[string]any{"allowed_origins": []string{host.URL}}, &key)
	shots := screenshotDir(t)

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(480, 760), chromedp.Navigate(host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "ready", `window.widgetEvents.some(e => e[0] === "ready")`)
	eval[any](t, ctx, shadow+`.querySelector(".launcher").click()`)
	poll(t, ctx, "the gate", shadow+`.querySelector("form.gate") !== null`)
	if eval[string](t, ctx, `getComputedStyle(`+shadow+`.querySelector(".controls")).display`) != "none" {
		t.Error("the talk button shows before the form is sent")
	}
	// A bad email is shown next to its field.
	fill := func(name, email string) {
		eval[any](t, ctx, fmt.Sprintf(`(r => { r.getElementById("g-name").value = %q; r.getElementById("g-email").value = %q; r.getElementById("g-order").value = "A-1042"; r.querySelector("form.gate").requestSubmit(); })(`+shadow+`)`, name, email))
	}
	fill("Grace Hopper", "grace@")
	poll(t, ctx, "the email error", shadow+`.getElementById("g-email-e").textContent === "Email must be an email address, such as name@example.com."`)
	screenshot(t, ctx, shots, "form-gate.png")
	fill("Grace Hopper", "grace@example.com")
	poll(t, ctx, "the lead event", `window.widgetEvents.some(e => e[0] === "lead")`)
	if eval[bool](t, ctx, shadow+`.querySelector(".controls").hidden`) {
		t.Fatal("no talk button after the form")
	}
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "session_started", `window.widgetEvents.some(e => e[0] === "session_started")`)
	poll(t, ctx, "the sandbox's greeting", shadow+`.querySelector("ol").innerText.includes("agentline sandbox")`)
	screenshot(t, ctx, shots, "form-gate-chat.png")
	lead := eval[map[string]any](t, ctx, `window.widgetEvents.find(e => e[0] === "lead")[1]`)
	started := eval[map[string]any](t, ctx, `window.widgetEvents.find(e => e[0] === "session_started")[1]`)
	if lead["session_id"] == nil || lead["session_id"] != started["session_id"] {
		t.Errorf("lead %v, session %v: the conversation is not the lead's session", lead, started)
	}
	ins := f.s.App.Sandbox.Instructions()
	if len(ins) != 1 {
		t.Fatalf("%d sessions minted", len(ins))
	}
	for _, want := range []string{"You help Acme's customers.", "- Your name: Grace Hopper", "- Email: grace@example.com", "- Order number: A-1042"} {
		if !strings.Contains(ins[0], want) {
			t.Errorf("the sandbox's session instructions lack %q:\n%s", want, ins[0])
		}
	}
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	leads := f.leads(t)
	if len(leads) != 1 || leads[0].SessionID == nil || *leads[0].SessionID != lead["session_id"] {
		t.Fatalf("stored leads %+v", leads)
	}

	// The embed-widget iframe page: the same gate, full-frame.
	embed := f.s.URL + "/api/channels/form/embed-widget/" + itoa(c.ID) + "?key=" + key.Key
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(400, 640), chromedp.Navigate(embed)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the framed gate", `(h => !!h && h.hasAttribute("data-frame") && !!h.shadowRoot.querySelector("form.gate"))(document.querySelector("svc-chat"))`)
	screenshot(t, ctx, shots, "form-gate-frame.png")
	eval[any](t, ctx, `(r => { r.getElementById("g-name").value = "Alan"; r.getElementById("g-email").value = "alan@example.com"; r.querySelector("form.gate").requestSubmit(); })(`+shadow+`)`)
	poll(t, ctx, "the talk button", `!`+shadow+`.querySelector(".controls").hidden`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	deadline := time.Now().Add(30 * time.Second)
	for len(f.s.App.Sandbox.Instructions()) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if ins := f.s.App.Sandbox.Instructions(); len(ins) != 2 || !strings.Contains(ins[1], "- Your name: Alan") {
		t.Fatalf("the framed gate's session: %q", ins)
	}
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
}

// gatePage is a site owner's page mounting a live chat form channel: no
// agentId, the agent comes from the form's submission.
func gatePage(agentline, key string, project, channel int64) string {
	return fmt.Sprintf(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head>
<body><h1>Acme shop</h1><p>Questions about an order? Chat with us.</p>
<script async src="%s/chat-widget.js" data-public-key="%s"></script>
<script>
window.widgetEvents = [];
addEventListener("load", function () {
  ["ready", "lead", "session_started", "session_ended", "transcript", "error"].forEach(function (e) {
    SvcChat.on(e, function (d) { window.widgetEvents.push([e, d]); });
  });
  SvcChat.mount({projectId: "%d", channelId: "%d"});
});
</script></body></html>`, agentline, key, project, channel)
}
