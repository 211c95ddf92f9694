package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

const chromiumPath = "/usr/bin/chromium"

// newBrowser gives the test a tab of its own in the package's one headless
// Chromium (with a fake microphone that grants itself), in a browser context
// of its own: cookies, storage, permissions and downloads are the test's
// alone, and the context is disposed of when the test ends. Starting a
// browser per test cost a second or more of every browser test. Without the
// binary the test is skipped, unless AGENTLINE_REQUIRE_CHROMIUM=1 (as in CI)
// makes that a failure.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	requireChromium(t)
	bctx, err := sharedBrowser.get()
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelCtx := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelCtx)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// newOwnBrowser starts a Chromium for the test alone: for a test that kills
// its browser.
func newOwnBrowser(t *testing.T) context.Context {
	t.Helper()
	requireChromium(t)
	ctx, cancel, err := startBrowser(t.TempDir())
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("AGENTLINE_REQUIRE_CHROMIUM=1 but %s: %v", chromiumPath, err)
		}
		t.Skipf("no %s (apt-get install chromium); AGENTLINE_REQUIRE_CHROMIUM=1 makes this a failure", chromiumPath)
	}
}

// startBrowser starts a headless Chromium on the profile directory dir and
// returns its first tab, which lives until cancel.
func startBrowser(dir string) (context.Context, context.CancelFunc, error) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true), chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		// Host candidates as IP addresses, not mDNS names, on loopback; and
		// cross-origin iframes in the page's process, so that the test can
		// look into the embed page's frame (the browser still enforces
		// frame-ancestors and the same-origin policy).
		chromedp.Flag("disable-features", "WebRtcHideLocalIpsWithMdns,IsolateOrigins,site-per-process"),
		chromedp.Flag("disable-site-isolation-trials", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	cancel := func() { cancelCtx(); cancelAlloc() }
	// The first run starts the browser, for as long as ctx lives; timeouts
	// go on contexts derived after it.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, cancel, nil
}

// sharedBrowser is the package's Chromium, started by the first browser test
// and stopped by TestMain.
var sharedBrowser lazyBrowser

type lazyBrowser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	dir    string
	err    error
}

func (b *lazyBrowser) get() (context.Context, error) {
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "agentline-chromium-"); b.err != nil {
			return
		}
		b.ctx, b.cancel, b.err = startBrowser(b.dir)
	})
	return b.ctx, b.err
}

func (b *lazyBrowser) stop() {
	if b.cancel != nil {
		b.cancel()
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// withBrowserContext is the browser context of the test's tab, for
// browser-wide commands (permissions, downloads) that take one: without it
// they would apply to the default context instead of the test's.
func browserContextID(ctx context.Context) cdp.BrowserContextID {
	return chromedp.FromContext(ctx).BrowserContextID
}

// shadow is JavaScript for the widget's shadow root.
const shadow = `document.querySelector("svc-chat").shadowRoot`

// hostPage is a site owner's page: a hostile stylesheet, the script tag
// with the key, and the mount call after the load event.
func hostPage(agentline, key string, project, agent, channel int64) string {
	return fmt.Sprintf(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title>
<style>* {color: red !important} body {font-family: serif; background: #fafaf5}</style></head>
<body><h1>Acme shop</h1><p>Welcome to our shop. This page's stylesheet paints every text red.</p>
<script async src="%s/chat-widget.js" data-public-key="%s"></script>
<script>
window.widgetEvents = [];
addEventListener("load", function () {
  ["ready", "session_started", "session_ended", "transcript", "error"].forEach(function (e) {
    SvcChat.on(e, function (d) { window.widgetEvents.push([e, d]); });
  });
  SvcChat.mount({projectId: "%d", agentId: "%d", channelId: "%d"});
});
</script></body></html>`, agentline, key, project, agent, channel)
}

func serveHTML(t *testing.T, html string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, html)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// screenshotDir is docs/images with AGENTLINE_SCREENSHOTS=1 (to refresh the
// docs' pictures), else a temporary directory.
func screenshotDir(t *testing.T) string {
	if os.Getenv("AGENTLINE_SCREENSHOTS") == "1" {
		return filepath.Join("..", "..", "docs", "images")
	}
	return t.TempDir()
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pollExpr waits (at most timeout) until the JavaScript expression is
// truthy in the tab's page. A navigation between the poll's lookup of the
// page's execution context and its evaluation fails the poll with "Cannot
// find context with specified id"; the page is then polled again, within
// the same timeout, as a person would look again at the new page.
func pollExpr(ctx context.Context, expr string, timeout, interval time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingTimeout(time.Until(deadline)), chromedp.WithPollingInterval(interval)))
		if err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") || time.Until(deadline) <= interval {
			return err
		}
	}
}

// poll waits until the JavaScript expression is truthy.
func poll(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if err := pollExpr(ctx, expr, 45*time.Second, 100*time.Millisecond); err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(function(){try{var r=`+shadow+`;return document.location.href+" state="+document.querySelector("svc-chat").dataset.state+" error="+r.querySelector(".error").textContent+" transcript="+r.querySelector("ol").innerText+" events="+JSON.stringify(window.widgetEvents||[])}catch(e){return String(e)}})()`))
		t.Fatalf("waiting for %s: %v\npage: %s", what, err, state)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// A visitor talks to the widget in a real browser: the host page on one
// loopback origin mounts the widget served by agentline on another, the
// session runs over WebRTC to the sandbox provider, the sandbox's function
// call reaches a webhook tool through /widget/v1/tools/execute, and the
// analytics events end up in the session's transcript.
func TestWidgetInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	webhookURL, hooked := webhookTool(t, `{"status":"shipped on March 3"}`, 4)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	var me struct {
		Features struct {
			Sandbox bool `json:"sandbox"`
		} `json:"features"`
	}
	s.Must(t, 200, "GET", "/api/me", tok, nil, &me)
	if !me.Features.Sandbox {
		t.Error("/api/me does not show the sandbox feature")
	}
	var p agentline.Project
	var a agentline.Agent
	var c agentline.Channel
	var key struct{ Key string }
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme", "branding": map[string]string{"display_name": "Acme help"}}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, map[string]any{"name": "lookup_order", "description": "Find an order",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []string{"id"}}, "url": webhookURL}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "voice_widget", "name": "site", "agent_id": a.ID,
		"settings": map[string]any{"color": "#0f766e", "show_transcript": true, "show_text_chat": true}}, &c)

	html := func(key string) string { return hostPage(s.URL, key, p.ID, a.ID, c.ID) }
	// The host page reads the key when asked: the key is made after the
	// host's origin is known.
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/framed" {
			io.WriteString(w, framePage(s.URL, c.ID, key.Key))
			return
		}
		io.WriteString(w, html(key.Key))
	}))
	defer host.Close()
	s.Must(t, 201, "POST", "/api/channels/"+itoa(c.ID)+"/key", tok, map[string]any{"allowed_origins": []string{host.URL}}, &key)
	shots := screenshotDir(t)

	// The closed launcher, at the channel's position in its color.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(480, 720), chromedp.Navigate(host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "ready", `window.widgetEvents.some(e => e[0] === "ready")`)
	if bg := eval[string](t, ctx, `getComputedStyle(`+shadow+`.querySelector(".launcher")).backgroundColor`); bg != "rgb(15, 118, 110)" {
		t.Errorf("launcher color %s, want the channel's #0f766e", bg)
	}
	screenshot(t, ctx, shots, "widget-launcher.png")

	// Open, talk: the sandbox greets, reports the audio it received, calls
	// the tool, and reads the tool's answer.
	eval[any](t, ctx, shadow+`.querySelector(".launcher").click()`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "session_started", `window.widgetEvents.some(e => e[0] === "session_started")`)
	poll(t, ctx, "remote audio playing", `(a => !!a && !a.paused && a.currentTime > 0)(`+shadow+`.querySelector("audio"))`)
	poll(t, ctx, "the tool's answer in the transcript", shadow+`.querySelector("ol").innerText.includes("shipped on March 3")`)
	transcript := eval[string](t, ctx, shadow+`.querySelector("ol").innerText`)
	for _, want := range []string{"agentline sandbox", "audio packets received from your microphone", "The tool answered: ", "shipped on March 3"} {
		if !strings.Contains(transcript, want) {
			t.Errorf("transcript lacks %q:\n%s", want, transcript)
		}
	}
	if n := s.App.Sandbox.RTPPackets(); n < 25 {
		t.Errorf("the sandbox received %d RTP packets from the browser, want >= 25", n)
	}
	select {
	case body := <-hooked:
		if !strings.Contains(body, `"42"`) {
			t.Errorf("webhook got %s", body)
		}
	case <-time.After(5 * time.Second):
		t.Error("the webhook tool was not called")
	}
	// Text chat: the sandbox repeats what was typed.
	eval[any](t, ctx, `(r => { r.querySelector("input").value = "Where is my order?"; r.querySelector("form").requestSubmit(); })(`+shadow+`)`)
	poll(t, ctx, "the answer to the text", `window.widgetEvents.some(e => e[0] === "transcript" && e[1].text === "You wrote \u201cWhere is my order?\u201d. In the sandbox I can only repeat it.")`)
	// The host's red stylesheet reaches the host page, not the widget.
	if h1 := eval[string](t, ctx, `getComputedStyle(document.querySelector("h1")).color`); h1 != "rgb(255, 0, 0)" {
		t.Fatalf("host stylesheet did not apply to the host page (h1 %s); the check below proves nothing", h1)
	}
	for _, sel := range []string{"li", ".status", "h2", "input"} {
		if col := eval[string](t, ctx, `getComputedStyle(`+shadow+`.querySelector("`+sel+`")).color`); col == "rgb(255, 0, 0)" {
			t.Errorf("the host's * {color: red !important} reached the widget's %s", sel)
		}
	}
	screenshot(t, ctx, shots, "widget-conversation.png")

	// End: session_ended, and the batch of analytics reaches the server.
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "session_ended", `window.widgetEvents.some(e => e[0] === "session_ended")`)
	var sessions struct {
		Sessions []struct {
			EndedAt    *time.Time        `json:"ended_at"`
			Origin     string            `json:"origin"`
			Transcript []json.RawMessage `json:"transcript"`
			ToolCalls  []json.RawMessage `json:"tool_calls"`
		} `json:"sessions"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/sessions", tok, nil, &sessions)
		if len(sessions.Sessions) == 1 && sessions.Sessions[0].EndedAt != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(sessions.Sessions) != 1 {
		t.Fatalf("%d sessions stored", len(sessions.Sessions))
	}
	got := sessions.Sessions[0]
	if got.EndedAt == nil || got.Origin != host.URL || len(got.Transcript) < 5 || len(got.ToolCalls) != 1 {
		t.Errorf("stored session: ended %v, origin %q, %d transcript lines, %d tool calls", got.EndedAt, got.Origin, len(got.Transcript), len(got.ToolCalls))
	}

	// A page of an origin the key does not allow shows the origin error.
	other := serveHTML(t, html(key.Key))
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 640), chromedp.Navigate(other.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the error event", `window.widgetEvents.some(e => e[0] === "error")`)
	eval[any](t, ctx, shadow+`.querySelector(".launcher").click()`)
	if msg := eval[string](t, ctx, shadow+`.querySelector(".error").textContent`); msg != "This assistant isn\u2019t available on this website." {
		t.Errorf("origin error shows %q", msg)
	}
	// At 360 px the open panel fits the screen.
	if w := eval[float64](t, ctx, shadow+`.querySelector(".panel").getBoundingClientRect().width`); w > 360-20 || w < 280 {
		t.Errorf("panel is %v px wide on a 360 px screen", w)
	}
	screenshot(t, ctx, shots, "widget-error.png")

	// The iframe page runs the same widget full-frame, with the key of the
	// query; its own origin may use the restricted key.
	before := s.App.Sandbox.Calls()
	embed := s.URL + "/api/channels/voice/embed/" + itoa(c.ID) + "?key=" + key.Key
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(400, 600), chromedp.Navigate(embed)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the embed page's widget", `(h => !!h && h.hasAttribute("data-frame") && h.style.getPropertyValue("--c") === "#0f766e")(document.querySelector("svc-chat"))`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "the tool's answer in the embed page", shadow+`.querySelector("ol").innerText.includes("shipped on March 3")`)
	if s.App.Sandbox.Calls() != before+1 {
		t.Errorf("the embed page opened %d calls", s.App.Sandbox.Calls()-before)
	}
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)

	// The same page in an <iframe allow="microphone"> of the allowed host.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(480, 720), chromedp.Navigate(host.URL+"/framed")); err != nil {
		t.Fatal(err)
	}
	frames, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("iframe")))
	if err != nil || len(frames) != 1 {
		t.Fatalf("iframe: %v %d", err, len(frames))
	}
	inFrame := func(what, expr string, timeout time.Duration) error {
		_, err := chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingInFrame(frames[0]), chromedp.WithPollingTimeout(timeout)))
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	if err := inFrame("the framed widget", `(h => !!h && h.style.getPropertyValue("--c") === "#0f766e")(document.querySelector("svc-chat"))`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := inFrame("talk", `(document.querySelector("svc-chat").shadowRoot.querySelector(".talk").click(), true)`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := inFrame("the tool's answer in the frame", `document.querySelector("svc-chat").shadowRoot.querySelector("ol").innerText.includes("shipped on March 3")`, 45*time.Second); err != nil {
		t.Fatal(err)
	}
	if s.App.Sandbox.Calls() != before+2 {
		t.Errorf("the framed page opened %d calls", s.App.Sandbox.Calls()-before-1)
	}

	// A host the key does not allow cannot frame the page (frame-ancestors).
	stranger := serveHTML(t, framePage(s.URL, c.ID, key.Key))
	if err := chromedp.Do(ctx, chromedp.Navigate(stranger.URL)); err != nil {
		t.Fatal(err)
	}
	if frames, err = chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("iframe"))); err != nil || len(frames) != 1 {
		t.Fatalf("iframe: %v %d", err, len(frames))
	}
	if err := inFrame("the widget framed by a stranger", `!!document.querySelector("svc-chat")`, 3*time.Second); err == nil {
		t.Error("a host outside the key's allowed origins framed the embed page")
	}
}

// framePage is a host page that embeds the widget as an iframe.
func framePage(agentline string, channel int64, key string) string {
	return fmt.Sprintf(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Framed</title></head><body>
<iframe src="%s/api/channels/voice/embed/%d?key=%s" allow="microphone" title="Voice assistant" style="width:380px;height:560px;border:0"></iframe>
</body></html>`, agentline, channel, key)
}
