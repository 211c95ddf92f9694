package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline/internal/provider/providerfake"
)

// pageErrors collects a page's uncaught exceptions, unhandled rejections,
// console.error calls and browser log entries at level error (a refused
// WebSocket, a failed load), until ctx ends.
type pageErrors struct {
	mu   sync.Mutex
	errs []string
}

func listenPageErrors(ctx context.Context) *pageErrors {
	pe := &pageErrors{}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				pe.mu.Lock()
				pe.errs = append(pe.errs, m.String()+" "+m.URL)
				pe.mu.Unlock()
			}
		}
	}()
	return pe
}

func (pe *pageErrors) list() []string {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return append([]string(nil), pe.errs...)
}

// Google's official browser SDK, @google/genai 3.1.0, with the ephemeral
// token of /widget/v1/session for a Gemini-kind agent: new GoogleGenAI with
// the token, apiVersion v1alpha and the provider's base URL, then
// ai.live.connect. The SDK picks the constrained Live method and the
// access_token query by the token's auth_tokens/ prefix; the fake Live
// socket checks the URL, the token agentline handed out and the setup
// message, sends model audio, a transcription and a toolCall, which the page
// runs through /widget/v1/tools/execute and answers with
// session.sendToolResponse.
func TestOfficialGoogleGenAISDK(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "@google/genai")
	ctx := newBrowser(t)
	pe := listenPageErrors(ctx)
	live := newGeminiLive(t)
	tokens := providerfake.New("sk-unused", "g-test")
	provider := httptest.NewServer(geminiProvider(live, tokens))
	defer provider.Close()
	g := newGeminiWidget(t, provider.URL, nil)
	s, tok, a, c, hooked := g.s, g.tok, g.a, g.c, g.hooked
	var key struct{ Key string }

	pages := map[string]string{
		"/genai.js": bundleNPM(t, nm, `export { GoogleGenAI, Modality } from "@google/genai";`),
	}
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ctype := "text/html; charset=utf-8"
		if strings.HasSuffix(r.URL.Path, ".js") {
			ctype = "text/javascript; charset=utf-8"
		}
		w.Header().Set("Content-Type", ctype)
		io.WriteString(w, body)
	}))
	defer host.Close()
	s.Must(t, 201, "POST", "/api/channels/"+itoa(c.ID)+"/key", tok, map[string]any{"allowed_origins": []string{host.URL}}, &key)

	pages["/"] = `<!doctype html><title>Official Gemini SDK</title><script type="module">
import { GoogleGenAI, Modality } from "/genai.js";
const B = "` + s.URL + `", H = { "X-API-Key": "` + key.Key + `", "Content-Type": "application/json" };
window.log = { text: [], audioBytes: 0, tools: [], warnings: [], error: "", closed: null };
const warn = console.warn;
console.warn = (...a) => { window.log.warnings.push(a.join(" ")); warn.apply(console, a); };
try {
  const s = await (await fetch(B + "/widget/v1/session", { method: "POST", headers: H,
    body: JSON.stringify({ agent_id: ` + itoa(a.ID) + ` }) })).json();
  window.log.token = s.ephemeral_token;
  const ai = new GoogleGenAI({ apiKey: s.ephemeral_token, httpOptions: { apiVersion: "v1alpha", baseUrl: "` + provider.URL + `" } });
  let live;
  const connected = ai.live.connect({
    model: s.model,
    config: { responseModalities: [Modality.AUDIO] },
    callbacks: {
      onmessage: async (m) => {
        for (const part of m.serverContent?.modelTurn?.parts ?? []) window.log.audioBytes += atob(part.inlineData?.data ?? "").length;
        if (m.serverContent?.outputTranscription?.text) window.log.text.push(m.serverContent.outputTranscription.text);
        for (const call of m.toolCall?.functionCalls ?? []) {
          const r = await (await fetch(B + "/widget/v1/tools/execute", { method: "POST", headers: H,
            body: JSON.stringify({ session_id: s.session_id, call_id: call.id, name: call.name, arguments: call.args }) })).json();
          window.log.tools.push(call.name + " " + JSON.stringify(call.args) + " -> " + r.output);
          (await connected).sendToolResponse({ functionResponses: [{ id: call.id, name: call.name, response: { output: r.output } }] });
        }
      },
      onerror: (e) => { window.log.error = "onerror: " + (e.message || e.type); },
      onclose: (e) => { window.log.closed = e.code; },
    },
  });
  live = await connected;
  window.live = live;
  window.log.connected = true;
} catch (e) { window.log.error = String((e && e.stack) || e); }
</script>`
	if err := chromedp.Do(ctx, chromedp.Navigate(host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "connected, or an error", `!!window.log && (window.log.connected || window.log.error !== "")`)
	if e := eval[string](t, ctx, `window.log.error`); e != "" {
		t.Fatalf("the official SDK failed: %s\npage errors: %q", e, pe.list())
	}
	poll(t, ctx, "the tool's answer", `window.log.text.some(x => x.startsWith("Tool said: "))`)
	got := eval[map[string]any](t, ctx, `window.log`)
	if text := fmt.Sprint(got["text"]); !strings.Contains(text, "Hello from the Gemini fake.") || !strings.Contains(text, "Tool said: "+`{"status":"shipped on March 3"}`) {
		t.Errorf("model text %s", text)
	}
	if n, _ := got["audioBytes"].(float64); n != 24000 { // 0.5 s of 24 kHz 16-bit PCM
		t.Errorf("%v bytes of model audio, want 24000", got["audioBytes"])
	}
	if tools := fmt.Sprint(got["tools"]); !strings.Contains(tools, `lookup_order {"id":"42"} -> {"status":"shipped on March 3"}`) {
		t.Errorf("tool calls %s", tools)
	}
	// The SDK's one warning about ephemeral tokens being experimental, and
	// none about the API version.
	if w := fmt.Sprint(got["warnings"]); strings.Contains(w, "v1alpha only") {
		t.Errorf("warnings %s", w)
	}
	hookCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	select {
	case <-hooked:
	case <-hookCtx.Done():
		t.Error("the webhook tool was not called")
	}
	live.mu.Lock()
	path, setup, token, reply := live.path, live.setup, live.token, live.toolReply
	live.mu.Unlock()
	t.Logf("the SDK asked for %s and sent %s", path, setup)
	if path != "/"+geminiConstrained {
		t.Errorf("Live socket path %q, want the SDK's %q", path, "/"+geminiConstrained)
	}
	if token == "" || token != got["token"] {
		t.Errorf("the Live socket got access_token %q, agentline handed out %v", token, got["token"])
	}
	if !strings.Contains(setup, `"model":"models/gemini-2.5-flash-native-audio-preview"`) || !strings.Contains(setup, `"responseModalities":["AUDIO"]`) {
		t.Errorf("setup %s", setup)
	}
	if reply != `{"status":"shipped on March 3"}` {
		t.Errorf("toolResponse output %q", reply)
	}
	eval[any](t, ctx, `window.live.close()`)
	poll(t, ctx, "closed", `window.log.closed !== null`)
	if errs := pe.list(); len(errs) != 0 {
		t.Errorf("page errors: %q", errs)
	}
}
