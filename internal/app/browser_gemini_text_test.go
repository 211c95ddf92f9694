package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/provider/providerfake"
)

// geminiTextLive is a fake of the constrained Live socket for a text
// session: after the setup it answers each clientContent turn with a model
// turn of text parts (a thought first, which is not an answer), and records
// whatever else arrives.
type geminiTextLive struct {
	mu    sync.Mutex
	other []string // messages that were neither setup nor clientContent
}

func (g *geminiTextLive) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer conn.CloseNow()
	ctx := r.Context()
	send := func(v any) {
		b, _ := json.Marshal(v)
		conn.Write(ctx, websocket.MessageBinary, b)
	}
	if _, _, err := conn.Read(ctx); err != nil { // the setup
		return
	}
	send(map[string]any{"setupComplete": map[string]any{}})
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			ClientContent *struct {
				Turns []struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"turns"`
				TurnComplete bool `json:"turnComplete"`
			} `json:"clientContent"`
		}
		if json.Unmarshal(msg, &m) != nil || m.ClientContent == nil {
			g.mu.Lock()
			g.other = append(g.other, string(msg))
			g.mu.Unlock()
			continue
		}
		if cc := m.ClientContent; cc.TurnComplete && len(cc.Turns) == 1 && len(cc.Turns[0].Parts) == 1 {
			text := cc.Turns[0].Parts[0].Text
			send(map[string]any{"serverContent": map[string]any{"modelTurn": map[string]any{"parts": []any{
				map[string]any{"text": "Thinking about it.", "thought": true}, map[string]any{"text": "Gemini read: "}}}}})
			send(map[string]any{"serverContent": map[string]any{"modelTurn": map[string]any{"parts": []any{map[string]any{"text": text}}}}})
			send(map[string]any{"serverContent": map[string]any{"turnComplete": true}})
		}
	}
}

// Typing first in the widget of a Gemini-kind agent: the
// token asks for TEXT answers, the browser asks for no microphone (the
// page's Permissions-Policy forbids it), sends clientContent, and shows
// the model turn's text, not its thoughts.
func TestGeminiTextChatInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	countMicrophone(t, ctx)
	live := &geminiTextLive{}
	tokens := providerfake.New("sk-unused", "g-test")
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(geminiPath(r.URL.Path), "/ws/") {
			live.ServeHTTP(w, r)
			return
		}
		tokens.ServeHTTP(w, r)
	}))
	defer provider.Close()
	g := newGeminiWidget(t, provider.URL, map[string]any{"show_text_chat": true})
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
	pollFor(t, ctx, 5*time.Second, "the text answer", `window.widgetEvents.some(e => e[0] === "transcript" && e[1].role === "assistant" && e[1].text === "Gemini read: Is it in stock?")`)
	if tr := eval[string](t, ctx, shadow+`.querySelector("ol").innerText`); strings.Contains(tr, "Thinking") || !strings.Contains(tr, "Is it in stock?") {
		t.Errorf("transcript:\n%s", tr)
	}
	if n := eval[float64](t, ctx, `window.micCalls`); n != 0 {
		t.Errorf("a Gemini text chat called getUserMedia %v times", n)
	}
	reqs := tokens.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"responseModalities":["TEXT"]`) {
		t.Errorf("token requests %+v, want one asking for TEXT", reqs)
	}
	live.mu.Lock()
	other := live.other
	live.mu.Unlock()
	if len(other) != 0 {
		t.Errorf("the browser sent more than text: %q", other)
	}
	if e := eval[string](t, ctx, shadow+`.querySelector(".error").hidden ? "" : `+shadow+`.querySelector(".error").textContent`); e != "" {
		t.Errorf("error shown: %q", e)
	}
	eval[any](t, ctx, shadow+`.querySelector(".end").click()`)
	poll(t, ctx, "the end", `window.widgetEvents.some(e => e[0] === "session_ended")`)
}
