package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline/internal/provider/geminilivefake"
	"github.com/agentline/agentline/internal/provider/providerfake"
)

// countAudioContexts makes every page of ctx count the AudioContexts it
// creates in window.audioContexts.
func countAudioContexts(t *testing.T, ctx context.Context) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.audioContexts = 0;
if (window.AudioContext) {
  const AC = window.AudioContext;
  window.AudioContext = class extends AC { constructor(...a) { super(...a); window.audioContexts++; } };
}`})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
}

// Typing first in the widget of a Gemini-kind agent whose model is a
// native-audio one, which refuses TEXT answers (the fake Live socket closes
// such a setup with 1007, as the service does, and locks the token's setup
// over the browser's): the token asks for AUDIO with
// outputAudioTranscription, the browser asks for no microphone (the page's
// Permissions-Policy forbids it) and plays nothing, sends the typed
// message as realtimeInput text (a native-audio model refuses clientContent
// turns once the conversation runs), and shows the transcription of the spoken answer as the agent's text.
// Every message both ways, and the token's setup, are checked against
// @google/genai's types.
func TestGeminiTextChatInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	countMicrophone(t, ctx)
	countAudioContexts(t, ctx)
	tokens := providerfake.New("sk-unused", "g-test")
	live := geminilivefake.New("g-test")
	defer live.Close()
	live.Constraints = tokens.GeminiSetup
	live.OnSession = func(ctx context.Context, ss *geminilivefake.Session) {
		ss.PlayText(ctx, func(in geminilivefake.TextInput) geminilivefake.TextReply {
			return geminilivefake.TextReply{Text: "Gemini read: " + in.User}
		})
	}
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(geminiPath(r.URL.Path), "/ws/") {
			live.ServeHTTP(w, r)
			return
		}
		tokens.ServeHTTP(w, r)
	}))
	defer provider.Close()
	g := newGeminiWidget(t, provider.URL, map[string]any{"show_text_chat": true})
	if !strings.Contains(g.a.Model, "native-audio") {
		t.Fatalf("agent model %q, want a native-audio one", g.a.Model)
	}
	var key struct{ Key string }
	g.s.Must(t, 201, "POST", "/api/channels/"+itoa(g.c.ID)+"/key", g.tok, nil, &key)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Permissions-Policy", "microphone=()")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, hostPage(g.s.URL, key.Key, g.p.ID, g.a.ID, g.c.ID))
	}))
	defer host.Close()

	if err := chromedp.Do(ctx, chromedp.Navigate(host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "ready", `window.widgetEvents.some(e => e[0] === "ready")`)
	eval[any](t, ctx, shadow+`.querySelector(".launcher").click()`)
	eval[any](t, ctx, `(r => { r.querySelector("form.text input").value = "Is it in stock?"; r.querySelector("form.text").requestSubmit(); })(`+shadow+`)`)
	pollFor(t, ctx, 5*time.Second, "the text answer", `window.widgetEvents.some(e => e[0] === "transcript" && e[1].role === "assistant" && e[1].text === "Gemini read: Is it in stock?") || !`+shadow+`.querySelector(".error").hidden`)
	if e := eval[string](t, ctx, shadow+`.querySelector(".error").hidden ? "" : `+shadow+`.querySelector(".error").textContent`); e != "" {
		t.Fatalf("error shown: %q", e)
	}
	if tr := eval[string](t, ctx, shadow+`.querySelector("ol").innerText`); !strings.Contains(tr, "Is it in stock?") || !strings.Contains(tr, "Gemini read: Is it in stock?") {
		t.Errorf("transcript:\n%s", tr)
	}
	screenshot(t, ctx, screenshotDir(t), "widget-gemini-text-chat.png")
	if n := eval[float64](t, ctx, `window.micCalls`); n != 0 {
		t.Errorf("a Gemini text chat called getUserMedia %v times", n)
	}
	if n := eval[float64](t, ctx, `window.audioContexts`); n != 0 {
		t.Errorf("a Gemini text chat made %v AudioContexts", n)
	}
	reqs := tokens.Requests()
	if len(reqs) != 1 {
		t.Fatalf("token requests %+v, want one", reqs)
	}
	var body struct{ BidiGenerateContentSetup json.RawMessage }
	json.Unmarshal(reqs[0].Body, &body)
	if s := string(body.BidiGenerateContentSetup); !strings.Contains(s, `"responseModalities":["AUDIO"]`) || !strings.Contains(s, `"outputAudioTranscription":{}`) ||
		strings.Contains(s, "speechConfig") || strings.Contains(s, "inputAudioTranscription") {
		t.Errorf("the token's setup %s, want AUDIO with outputAudioTranscription, no voice", s)
	}
	sessions := live.Sessions()
	if len(sessions) != 1 {
		t.Fatalf("%d Live sessions", len(sessions))
	}
	ss := sessions[0]
	if s, _ := ss.Setup(); !slices.Equal(s.GenerationConfig.ResponseModalities, []string{"AUDIO"}) || len(s.OutputAudioTranscription) == 0 {
		t.Errorf("the session ran with %+v", s)
	}
	var client, server []string
	for _, m := range ss.Messages() {
		client = append(client, string(m.Raw))
		if m.Kind != "setup" && m.Kind != "realtimeInput" {
			t.Errorf("the browser sent more than realtimeInput text: %s", m.Raw)
		}
	}
	if got := ss.Texts(); !slices.Equal(got, []string{"Is it in stock?"}) {
		t.Errorf("realtimeInput texts %q, want the typed message", got)
	}
	for _, m := range ss.Sent() {
		server = append(server, string(m))
	}
	if nm := genaiModules(t); nm != "" {
		checkGenAITypes(t, nm, server, client, []string{string(body.BidiGenerateContentSetup)})
		t.Logf("tsc took the token's setup, %d server and %d client messages as @google/genai types", len(server), len(client))
	}
	eval[any](t, ctx, shadow+`.querySelector(".end").click()`)
	poll(t, ctx, "the end", `window.widgetEvents.some(e => e[0] === "session_ended")`)
}
