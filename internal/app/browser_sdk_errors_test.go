package app_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// sdkPage is a module page on the host that loads the SDK from agentline,
// records console.warn (window.warnings), every RTCPeerConnection made
// (window.pcs), and a session's events (window.log), and leaves
// window.client and window.start(options) for the test to drive.
func sdkPage(base, key string) string {
	return `<!doctype html><title>SDK</title>` + warnings + `<script>
window.pcs = [];
window.RTCPeerConnection = (P => class extends P { constructor(...a) { super(...a); window.pcs.push(this); } })(window.RTCPeerConnection);
</script><script type="module">
import { createClient, AgentlineError } from "` + base + `/sdk/client.js";
window.client = createClient({ baseUrl: "` + base + `", publicKey: "` + key + `" });
window.start = (opts) => {
  window.log = { states: [], lines: [], errors: [], ends: [] };
  const s = window.session = window.client.startSession(opts);
  s.on("state", (x) => window.log.states.push(x));
  s.on("transcript", (l) => { if (l.final) window.log.lines.push(l.role + ": " + l.text); });
  s.on("error", (e) => window.log.errors.push({ typed: e instanceof AgentlineError, code: e.code, status: e.status, retryAfter: e.retryAfter, serverCode: e.serverCode || "" }));
  s.on("end", (e) => window.log.ends.push(e.reason));
};
window.loaded = true;
</script>`
}

// sdkError is what the page's error listener recorded.
type sdkError struct {
	Typed      bool    `json:"typed"`
	Code       string  `json:"code"`
	Status     float64 `json:"status"`
	RetryAfter float64 `json:"retryAfter"`
	ServerCode string  `json:"serverCode"`
}

func (site *sdkSite) openSDKPage(t *testing.T, ctx context.Context) {
	t.Helper()
	site.pages["/sdk"] = sdkPage(site.s.URL, site.key)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.host.URL+"/sdk")); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the SDK loaded", `window.loaded === true`)
}

// lastError waits for the session's error and returns it with the warnings.
func lastError(t *testing.T, ctx context.Context) (sdkError, []string) {
	t.Helper()
	poll(t, ctx, "the error and the end", `window.log.errors.length > 0 && window.log.ends.length > 0`)
	errs := eval[[]sdkError](t, ctx, `window.log.errors`)
	if ends := eval[[]string](t, ctx, `window.log.ends`); len(errs) != 1 || len(ends) != 1 || ends[0] != "error" {
		t.Errorf("errors %+v, ends %q: want one error and one end with reason error", errs, ends)
	}
	if st := eval[string](t, ctx, `window.session.state`); st != "ended" {
		t.Errorf("state after the error %q", st)
	}
	return errs[0], eval[[]string](t, ctx, `window.warnings`)
}

// The SDK's session controls (sendText, mute, end) on a live sandbox call,
// then its typed errors as a page sees them: rate_limited with the
// Retry-After the server exposes to the page and one console.warn,
// microphone_denied when the page may not use the microphone, and
// provider_unavailable when the provider fails to start the call.
func TestSDKSessionControlsAndErrors(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	site := newSDKSite(t, false, map[string]any{})
	site.openSDKPage(t, ctx)

	eval[any](t, ctx, `window.start({ agentId: "`+itoa(site.a.ID)+`" })`)
	poll(t, ctx, "listening", `window.log.states.includes("listening")`)
	// sendText: the typed line is the visitor's, the sandbox repeats it.
	if ok := eval[bool](t, ctx, `window.session.sendText("Where is my order?")`); !ok {
		t.Fatal("sendText on a live session returned false")
	}
	poll(t, ctx, "the sandbox's answer to the text", `window.log.lines.includes("assistant: You wrote \u201cWhere is my order?\u201d. In the sandbox I can only repeat it.")`)
	if !strings.Contains(strings.Join(eval[[]string](t, ctx, `window.log.lines`), "\n"), "user: Where is my order?") {
		t.Errorf("no user line for the typed text: %q", eval[[]string](t, ctx, `window.log.lines`))
	}
	// mute: the microphone track the peer connection sends is disabled
	// (WebRTC then sends silence), and enabled again on unmute.
	micEnabled := `window.pcs[0].getSenders().filter(s => s.track && s.track.kind === "audio").map(s => s.track.enabled).join()`
	if got := eval[string](t, ctx, micEnabled); got != "true" {
		t.Fatalf("microphone senders before mute: %q", got)
	}
	eval[any](t, ctx, `window.session.mute()`)
	if got := eval[string](t, ctx, micEnabled+` + " " + window.session.muted`); got != "false true" {
		t.Errorf("after mute(): senders enabled %q", got)
	}
	eval[any](t, ctx, `window.session.mute(false)`)
	if got := eval[string](t, ctx, micEnabled+` + " " + window.session.muted`); got != "true false" {
		t.Errorf("after mute(false): senders enabled %q", got)
	}
	eval[any](t, ctx, `window.session.end()`)
	if got := eval[string](t, ctx, `window.log.ends.join() + " " + window.log.states.at(-1) + " " + window.pcs[0].connectionState + " " + window.session.sendText("late")`); got != "client ended closed false" {
		t.Errorf("after end(): %q, want reason client, state ended, peer connection closed, sendText false", got)
	}
	waitSessionEnded(t, site)
	if w := eval[[]string](t, ctx, `window.warnings`); len(w) != 0 {
		t.Errorf("warnings on a working session: %q", w)
	}

	// rate_limited: a daily limit of one request, which config() uses up
	// (the day's count starts with the limit).
	site.s.Must(t, 200, "PATCH", "/api/channels/"+itoa(site.c.ID)+"/key", site.tok, map[string]any{"rate_limit_per_day": 1}, nil)
	eval[any](t, ctx, `window.client.config().then(() => { window.configured = true; })`)
	poll(t, ctx, "config within the limit", `window.configured === true`)
	for i := range 2 {
		eval[any](t, ctx, `window.start({ agentId: `+itoa(site.a.ID)+`, textOnly: true })`)
		e, w := lastError(t, ctx)
		if !e.Typed || e.Code != "rate_limited" || e.Status != 429 || e.RetryAfter < 1 || e.ServerCode != "rate_limited" {
			t.Errorf("try %d: error %+v, want a typed rate_limited, 429, with retryAfter", i+1, e)
		}
		// One warning per cause, however often it happens.
		if len(w) != 1 || !strings.Contains(w[0], "rate limit") || !strings.Contains(w[0], site.key[:11]) || !strings.Contains(w[0], "rate_limit_per_day") {
			t.Errorf("try %d: warnings %q, want one naming the key and its limits", i+1, w)
		}
	}
	if calls := site.s.App.Sandbox.Calls(); calls != 1 {
		t.Errorf("%d sandbox calls, want the first session's only", calls)
	}

	// microphone_denied: the host's Permissions-Policy forbids the
	// microphone, so getUserMedia is refused before any request.
	noMic := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Permissions-Policy", "microphone=()")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, sdkPage(site.s.URL, site.key))
	}))
	defer noMic.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(noMic.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the SDK loaded", `window.loaded === true`)
	eval[any](t, ctx, `window.start({ agentId: `+itoa(site.a.ID)+` })`)
	if e, _ := lastError(t, ctx); !e.Typed || e.Code != "microphone_denied" || e.Status != 0 {
		t.Errorf("error %+v, want a typed microphone_denied", e)
	}
}

// provider_unavailable: agentline is up, but the provider fails to mint
// the session's client secret (a 500 from OPENAI_BASE_URL), so
// /widget/v1/session answers 502 provider_error.
func TestSDKProviderUnavailable(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
	}))
	defer down.Close()
	site := newSDKSiteEnv(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": down.URL}, false, map[string]any{})
	site.openSDKPage(t, ctx)
	eval[any](t, ctx, `window.start({ agentId: `+itoa(site.a.ID)+`, textOnly: true })`)
	e, w := lastError(t, ctx)
	if !e.Typed || e.Code != "provider_unavailable" || e.Status < 500 {
		t.Errorf("error %+v, want a typed provider_unavailable with the 5xx status", e)
	}
	if len(w) != 0 {
		t.Errorf("warnings %q: a provider failure is not the site owner's to fix", w)
	}
}
