package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/store"
)

// geminiLive is the Live API fake (geminilivefake) as the widget's tests
// use it: it answers only the v1alpha constrained method with an
// access_token (closing with 1007 when the first message is not a setup
// naming models/{model}), and each session plays a script: 24 kHz PCM with
// an output transcription, one toolCall, and the tool's answer read back
// from toolResponse and spoken.
type geminiLive struct {
	fake      *geminilivefake.Server
	mu        sync.Mutex
	path      string // of the last handshake, as the client wrote it
	setup     string
	token     string
	toolReply string
}

func newGeminiLive(t testing.TB) *geminiLive {
	g := &geminiLive{fake: geminilivefake.New("unused")}
	g.fake.OnSession = g.script
	t.Cleanup(g.fake.Close)
	return g
}

func (g *geminiLive) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if geminiPath(r.URL.Path) != geminiConstrained {
		http.NotFound(w, r)
		return
	}
	g.fake.ServeHTTP(w, r)
}

func (g *geminiLive) script(ctx context.Context, ss *geminilivefake.Session) {
	_, setup := ss.Setup()
	g.mu.Lock()
	g.path, g.token, g.setup = ss.Path, ss.Token, string(setup)
	g.mu.Unlock()
	ss.SendAudio(ctx, geminilivefake.Tone(500*time.Millisecond))
	ss.SendOutputTranscription(ctx, "Hello from the Gemini fake.")
	ss.SendTurnComplete(ctx)
	ss.SendToolCall(ctx, geminilivefake.FunctionCall{ID: "fc_1", Name: "lookup_order", Args: map[string]any{"id": "42"}})
	m, err := ss.WaitFor(ctx, func(m geminilivefake.Message) bool { return m.Kind == "toolResponse" })
	if err != nil {
		return
	}
	var tr struct {
		ToolResponse struct {
			FunctionResponses []struct {
				ID       string `json:"id"`
				Response struct {
					Output string `json:"output"`
				} `json:"response"`
			} `json:"functionResponses"`
		} `json:"toolResponse"`
	}
	if json.Unmarshal(m.Raw, &tr) != nil || len(tr.ToolResponse.FunctionResponses) != 1 || tr.ToolResponse.FunctionResponses[0].ID != "fc_1" {
		return
	}
	out := tr.ToolResponse.FunctionResponses[0].Response.Output
	g.mu.Lock()
	g.toolReply = out
	g.mu.Unlock()
	ss.SendOutputTranscription(ctx, "Tool said: "+out)
	ss.SendTurnComplete(ctx)
}

// micBytes is how many bytes of microphone PCM every session received.
func (g *geminiLive) micBytes() int64 {
	var n int64
	for _, ss := range g.fake.Sessions() {
		n += ss.AudioBytes()
	}
	return n
}

// badChunks counts the audio chunks not sent as audio/pcm;rate=16000.
func (g *geminiLive) badChunks() int {
	n := 0
	for _, ss := range g.fake.Sessions() {
		for _, c := range ss.Chunks() {
			if c.MimeType != "audio/pcm;rate=16000" {
				n++
			}
		}
	}
	return n
}

const geminiConstrained = "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained"

// geminiPath is path with runs of slashes made one: @google/genai joins its
// base URL, which it always ends with a slash, and "/ws/...", so it asks
// for "//ws/..." (wss://generativelanguage.googleapis.com//ws/... by
// default), which the real service answers.
func geminiPath(path string) string {
	for strings.Contains(path, "//") {
		path = strings.ReplaceAll(path, "//", "/")
	}
	return path
}

// geminiProvider serves the fake Live socket under /ws/ and the token
// endpoints (tokens) elsewhere. It is not a ServeMux: a ServeMux redirects
// the "//ws/..." that @google/genai asks for, and browsers do not follow
// redirects of a WebSocket handshake.
func geminiProvider(live *geminiLive, tokens http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(geminiPath(r.URL.Path), "/ws/") {
			live.ServeHTTP(w, r)
			return
		}
		tokens.ServeHTTP(w, r)
	})
}

// The Gemini-compatible path in a real browser: a WebSocket with the
// ephemeral token, the microphone as 16 kHz PCM from the AudioWorklet,
// 24 kHz PCM played back, and a tool call answered with toolResponse.
func TestGeminiWidgetInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	live := newGeminiLive(t)
	tokens := providerfake.New("sk-unused", "g-test")
	mux := http.NewServeMux()
	mux.Handle("/ws/", live)
	mux.Handle("/", tokens)
	provider := httptest.NewServer(mux)
	defer provider.Close()
	g := newGeminiWidget(t, provider.URL, map[string]any{"show_transcript": true})
	s, tok, p, a, c, hooked := g.s, g.tok, g.p, g.a, g.c, g.hooked
	var key struct{ Key string }
	s.Must(t, 201, "POST", "/api/channels/"+itoa(c.ID)+"/key", tok, nil, &key)
	host := serveHTML(t, hostPage(s.URL, key.Key, p.ID, a.ID, c.ID))

	if err := chromedp.Do(ctx, chromedp.Navigate(host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "ready", `window.widgetEvents.some(e => e[0] === "ready")`)
	eval[any](t, ctx, shadow+`.querySelector(".launcher").click()`)
	// Record every state the widget passes through.
	eval[any](t, ctx, `window.states = []; new MutationObserver(() => window.states.push(document.querySelector("svc-chat").dataset.state)).observe(document.querySelector("svc-chat"), {attributes: true, attributeFilter: ["data-state"]})`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "the greeting", shadow+`.querySelector("ol").innerText.includes("Hello from the Gemini fake.")`)
	poll(t, ctx, "the tool's answer", shadow+`.querySelector("ol").innerText.includes("Tool said: ")`)
	deadline := time.Now().Add(10 * time.Second)
	for live.micBytes() < 16000 && time.Now().Before(deadline) { // 0.5 s of 16 kHz 16-bit
		time.Sleep(100 * time.Millisecond)
	}
	if n := live.micBytes(); n < 16000 {
		t.Errorf("the fake received %d bytes of microphone PCM, want >= 16000", n)
	}
	if n := live.badChunks(); n != 0 {
		t.Errorf("%d audio chunks without mimeType audio/pcm;rate=16000", n)
	}
	live.mu.Lock()
	setup, token, reply := live.setup, live.token, live.toolReply
	live.mu.Unlock()
	if !strings.HasPrefix(token, "auth_tokens/") || !strings.Contains(setup, `"model":"models/gemini-2.5-flash-native-audio-preview"`) {
		t.Errorf("token %q, setup %s", token, setup)
	}
	if !strings.Contains(reply, "shipped on March 3") {
		t.Errorf("toolResponse output %q", reply)
	}
	select {
	case <-hooked:
	case <-time.After(5 * time.Second):
		t.Error("the webhook tool was not called")
	}
	if states := eval[[]string](t, ctx, `window.states`); !strings.Contains(strings.Join(states, " "), "speaking") {
		t.Errorf("the widget never played audio (states %v)", states)
	}
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "session_ended", `window.widgetEvents.some(e => e[0] === "session_ended")`)
}

// geminiWidget is a Gemini-kind agent with a webhook tool (answering
// `{"status":"shipped on March 3"}`) on a voice widget channel, served by
// an agentline whose Gemini provider is at providerURL.
type geminiWidget struct {
	s      *apptest.Server
	tok    string
	p      agentline.Project
	a      agentline.Agent
	c      agentline.Channel
	hooked <-chan string
}

func newGeminiWidget(t *testing.T, providerURL string, settings map[string]any) geminiWidget {
	t.Helper()
	webhookURL, hooked := webhookTool(t, `{"status":"shipped on March 3"}`, 2)
	g := geminiWidget{hooked: hooked, s: apptest.StartFresh(t, store.SQLite, map[string]string{
		"GEMINI_API_KEY": "g-test", "GEMINI_BASE_URL": providerURL, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})}
	_, g.tok = g.s.NewUser(t, "owner@example.com")
	g.s.Must(t, 201, "POST", "/api/projects", g.tok, map[string]string{"name": "Acme"}, &g.p)
	g.s.Must(t, 201, "POST", "/api/projects/"+itoa(g.p.ID)+"/agents", g.tok, map[string]string{"name": "Gem", "model": "gemini-2.5-flash-native-audio-preview"}, &g.a)
	if g.a.Provider != agentline.ProviderGemini {
		t.Fatalf("agent provider %q", g.a.Provider)
	}
	g.s.Must(t, 201, "POST", "/api/agents/"+itoa(g.a.ID)+"/tools", g.tok, map[string]any{"name": "lookup_order", "description": "Find an order",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}, "url": webhookURL}, nil)
	channel := map[string]any{"type": "voice_widget", "name": "site", "agent_id": g.a.ID}
	if settings != nil {
		channel["settings"] = settings
	}
	g.s.Must(t, 201, "POST", "/api/projects/"+itoa(g.p.ID)+"/channels", g.tok, channel, &g.c)
	return g
}
