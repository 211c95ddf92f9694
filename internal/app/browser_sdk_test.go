package app_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/store"
)

// sdkSite is agentline with the sandbox provider, a voice widget channel
// whose agent has a webhook tool (when tool is set), and a host on another
// loopback origin serving pages (path -> HTML, filled in by the test),
// which the channel's key allows.
type sdkSite struct {
	s      *apptest.Server
	tok    string
	p      agentline.Project
	a      agentline.Agent
	c      agentline.Channel
	key    string
	host   *httptest.Server
	pages  map[string]string
	hooked <-chan string
}

func newSDKSite(t *testing.T, tool bool, channelSettings map[string]any) *sdkSite {
	t.Helper()
	return newSDKSiteEnv(t, map[string]string{"AGENTLINE_SANDBOX": "true"}, tool, channelSettings)
}

// newSDKSiteEnv is newSDKSite with agentline's provider settings in env
// instead of the sandbox.
func newSDKSiteEnv(t *testing.T, env map[string]string, tool bool, channelSettings map[string]any) *sdkSite {
	t.Helper()
	site := &sdkSite{pages: map[string]string{}}
	var webhookURL string
	webhookURL, site.hooked = webhookTool(t, `{"status":"shipped on March 3"}`, 8)
	env["AGENTLINE_ALLOW_PRIVATE_WEBHOOKS"] = "true"
	s := apptest.StartFresh(t, store.SQLite, env)
	site.s = s
	_, site.tok = s.NewUser(t, "owner@example.com")
	s.Must(t, 201, "POST", "/api/projects", site.tok, map[string]any{"name": "Acme"}, &site.p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(site.p.ID)+"/agents", site.tok, map[string]string{"name": "Ada"}, &site.a)
	if tool {
		s.Must(t, 201, "POST", "/api/agents/"+itoa(site.a.ID)+"/tools", site.tok, map[string]any{"name": "lookup_order", "description": "Find an order",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []string{"id"}}, "url": webhookURL}, nil)
	}
	s.Must(t, 201, "POST", "/api/projects/"+itoa(site.p.ID)+"/channels", site.tok, map[string]any{"type": "voice_widget", "name": "site", "agent_id": site.a.ID,
		"settings": channelSettings}, &site.c)
	site.host = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := site.pages[r.URL.Path]
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
	t.Cleanup(site.host.Close)
	var key struct{ Key string }
	s.Must(t, 201, "POST", "/api/channels/"+itoa(site.c.ID)+"/key", site.tok, map[string]any{"allowed_origins": []string{site.host.URL}}, &key)
	site.key = key.Key
	return site
}

// warnings records the page's console.warn lines in window.warnings.
const warnings = `<script>window.warnings = []; (w => { console.warn = function () { window.warnings.push([].join.call(arguments, " ")); w.apply(console, arguments); }; })(console.warn);</script>`

// The one tag alone: the key names channel, project and agent; the
// script's attributes set the position, the color and an open panel; the
// widget talks to the sandbox and runs its tool call. SvcChat.mount with
// the same key replaces it (one widget), unmount removes it; on an origin
// the key does not allow, one console.warn names the page's origin.
func TestOneTagWidget(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	site := newSDKSite(t, true, map[string]any{"color": "#0f766e", "show_transcript": true})
	tag := fmt.Sprintf(`<script async src="%s/chat-widget.js" data-public-key="%s" data-position="bottom-left" data-color="#7c3aed" data-open></script>`, site.s.URL, site.key)
	page := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title>` + warnings + `</head><body><h1>Acme shop</h1><p>One tag, nothing else.</p>` + tag + `</body></html>`
	site.pages["/"] = page
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(520, 720), chromedp.Navigate(site.host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the panel open by data-open", `(h => !!h && !h.shadowRoot.querySelector(".panel").hidden)(document.querySelector("svc-chat"))`)
	if got := eval[string](t, ctx, `document.querySelector("svc-chat").dataset.position + " " + getComputedStyle(`+shadow+`.querySelector(".launcher")).backgroundColor`); got != "bottom-left rgb(124, 58, 237)" {
		t.Errorf("position and color %q, want data-position and data-color over the channel's", got)
	}
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "the tool's answer", shadow+`.querySelector("ol").innerText.includes("shipped on March 3")`)
	screenshot(t, ctx, screenshotDir(t), "widget-one-tag.png")
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "ended", `document.querySelector("svc-chat").dataset.state === "ended"`)

	// An explicit mount wins, and twice is still one widget.
	eval[any](t, ctx, `SvcChat.mount({projectId: "`+itoa(site.p.ID)+`", agentId: `+itoa(site.a.ID)+`, channelId: "`+itoa(site.c.ID)+`", position: "bottom-right"}); SvcChat.mount({projectId: "`+itoa(site.p.ID)+`", agentId: `+itoa(site.a.ID)+`, channelId: "`+itoa(site.c.ID)+`", position: "bottom-right"})`)
	poll(t, ctx, "the remounted widget", `document.querySelectorAll("svc-chat").length === 1 && document.querySelector("svc-chat").dataset.position === "bottom-right"`)
	eval[any](t, ctx, `SvcChat.unmount()`)
	if n := eval[float64](t, ctx, `document.querySelectorAll("svc-chat").length`); n != 0 {
		t.Errorf("%v widgets after unmount", n)
	}
	if w := eval[[]string](t, ctx, `window.warnings`); len(w) != 0 {
		t.Errorf("warnings on an allowed origin: %q", w)
	}

	// Another origin: the visitor's sentence, and one warning for the owner.
	other := serveHTML(t, page)
	if err := chromedp.Do(ctx, chromedp.Navigate(other.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the origin error", `(h => !!h && h.dataset.error === "origin_refused")(document.querySelector("svc-chat"))`)
	w := eval[[]string](t, ctx, `window.warnings`)
	if len(w) != 1 || !strings.Contains(w[0], other.URL) || !strings.Contains(w[0], "allowed_origins") || !strings.Contains(w[0], site.key[:11]) {
		t.Errorf("warnings %q: want one naming %s, allowed_origins and the key's prefix", w, other.URL)
	}
	// A bad key: its own sentence and warning.
	site.pages["/bad"] = strings.Replace(page, site.key, "svc_pk_"+strings.Repeat("x", 40), 1)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.host.URL+"/bad")); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the key error", `(h => !!h && h.dataset.error === "invalid_key")(document.querySelector("svc-chat"))`)
	if w := eval[[]string](t, ctx, `window.warnings`); len(w) != 1 || !strings.Contains(w[0], "svc_pk_xxxx") {
		t.Errorf("bad key warnings %q", w)
	}
	// The spec's mount, its four options as strings, replaces it: the
	// explicit publicKey wins over the tag's, and the widget talks.
	eval[any](t, ctx, fmt.Sprintf(`SvcChat.mount({projectId: "%d", agentId: "%d", channelId: "%d", publicKey: "%s"})`, site.p.ID, site.a.ID, site.c.ID, site.key))
	poll(t, ctx, "the spec-mounted widget", `document.querySelectorAll("svc-chat").length === 1 && !document.querySelector("svc-chat").dataset.error && document.querySelector("svc-chat").style.getPropertyValue("--c") === "#7c3aed"`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "the tool's answer in the spec-mounted widget", shadow+`.querySelector("ol").innerText.includes("shipped on March 3")`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "ended", `document.querySelector("svc-chat").dataset.state === "ended"`)
}

// docsExample is the custom client of docs/sdk.md, as written, for base
// and key.
func docsExample(t *testing.T, base, key string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "sdk.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```html\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/sdk.md has no html example")
	}
	return strings.NewReplacer("https://agentline.example.com", base, "svc_pk_...", key).Replace(string(m[1]))
}

// The docs' custom client, loaded as a module from another origin, gets the
// sandbox's transcript and runs its tool call through /widget/v1/tools/execute.
func TestSDKExamplePage(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	site := newSDKSite(t, true, map[string]any{})
	site.pages["/"] = docsExample(t, site.s.URL, site.key)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(520, 480), chromedp.Navigate(site.host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the button", `!!document.querySelector("button")`)
	eval[any](t, ctx, `document.querySelector("button").click()`)
	poll(t, ctx, "the tool's answer", `document.querySelector("ol").innerText.includes("shipped on March 3")`)
	text := eval[string](t, ctx, `document.querySelector("ol").innerText`)
	for _, want := range []string{"Agent: Hello! This is the agentline sandbox.", "You: (sandbox:", "shipped on March 3"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q:\n%s", want, text)
		}
	}
	select {
	case <-site.hooked:
	case <-time.After(5 * time.Second):
		t.Error("the webhook tool was not called")
	}
	screenshot(t, ctx, screenshotDir(t), "sdk-example.png")
	eval[any](t, ctx, `document.querySelector("button").click()`)
	poll(t, ctx, "the end", `document.querySelector("button").textContent === "Talk to us"`)
	waitSessionEnded(t, site)
	// The SDK timed the answer after the visitor's turn (the sandbox's
	// speech_stopped to its next output_audio_buffer.started) and reported
	// it: the widget conversation has it.
	var convs struct{ Conversations []agentline.Conversation }
	site.s.Must(t, 200, "GET", "/api/projects/"+itoa(site.p.ID)+"/conversations", site.tok, nil, &convs)
	if len(convs.Conversations) != 1 || convs.Conversations[0].Latency == nil || convs.Conversations[0].Latency.Turns < 1 {
		t.Fatalf("conversations = %+v", convs.Conversations)
	}
	t.Logf("the SDK's turn latency: %+v", *convs.Conversations[0].Latency)
}

// waitSessionEnded waits until the one stored session has its end.
func waitSessionEnded(t *testing.T, site *sdkSite) {
	t.Helper()
	var sessions struct {
		Sessions []struct {
			EndedAt *time.Time `json:"ended_at"`
		} `json:"sessions"`
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		site.s.Must(t, 200, "GET", "/api/projects/"+itoa(site.p.ID)+"/sessions", site.tok, nil, &sessions)
		if len(sessions.Sessions) == 1 && sessions.Sessions[0].EndedAt != nil {
			return
		}
	}
	t.Errorf("sessions stored: %+v", sessions.Sessions)
}

// bundleNPM bundles an npm package's exports into one ES module for
// Chromium, with esbuild's Go API, from the node_modules .ci/run installs.
func bundleNPM(t *testing.T, nm, entry string) string {
	t.Helper()
	res := api.Build(api.BuildOptions{
		Stdin:     &api.StdinOptions{Contents: entry, ResolveDir: filepath.Dir(nm), Loader: api.LoaderJS},
		Bundle:    true,
		Format:    api.FormatESModule,
		Platform:  api.PlatformBrowser,
		NodePaths: []string{nm},
		Write:     false,
		LogLevel:  api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		t.Fatalf("bundle %s: %v", entry, res.Errors[0].Text)
	}
	return string(res.OutputFiles[0].Contents)
}

// nodeModules is the directory .ci/run installs the tests' npm packages
// into (AGENTLINE_NODE_MODULES overrides it); without the package the test
// is skipped, unless AGENTLINE_REQUIRE_NODE=1 makes that a failure.
func nodeModules(t *testing.T, pkg string) string {
	t.Helper()
	dir := os.Getenv("AGENTLINE_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join("..", "..", ".cache", "node", "node_modules")
	}
	dir, _ = filepath.Abs(dir)
	if _, err := os.Stat(filepath.Join(dir, pkg, "package.json")); err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_NODE") == "1" {
			t.Fatalf("AGENTLINE_REQUIRE_NODE=1 but no %s in %s (.ci/run installs it)", pkg, dir)
		}
		t.Skipf("no %s in %s (.ci/run installs it); AGENTLINE_REQUIRE_NODE=1 makes this a failure", pkg, dir)
	}
	return dir
}

// The SDK with a Gemini-kind agent, against the fake Live socket: the
// ephemeral token, the transcript, and the tool call answered with
// toolResponse after /widget/v1/tools/execute.
func TestSDKGemini(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	live := newGeminiLive(t)
	mux := http.NewServeMux()
	mux.Handle("/ws/", live)
	mux.Handle("/", providerfake.New("sk-unused", "g-test"))
	provider := httptest.NewServer(mux)
	defer provider.Close()
	g := newGeminiWidget(t, provider.URL, nil)
	s, tok, a, c, hooked := g.s, g.tok, g.a, g.c, g.hooked
	var key struct{ Key string }
	s.Must(t, 201, "POST", "/api/channels/"+itoa(c.ID)+"/key", tok, nil, &key)
	host := serveHTML(t, `<!doctype html><title>SDK</title><script type="module">
import { createClient } from "`+s.URL+`/sdk/client.js";
window.log = { transcript: [], tools: [], states: [], errors: [] };
const session = createClient({ baseUrl: "`+s.URL+`", publicKey: "`+key.Key+`" }).startSession({ agentId: "`+itoa(a.ID)+`" });
session.on("transcript", (l) => { if (l.final) window.log.transcript.push(l.role + ": " + l.text); });
session.on("toolCall", (c) => window.log.tools.push(c));
session.on("state", (st) => window.log.states.push(st));
session.on("error", (e) => window.log.errors.push(e.code + ": " + e.message));
window.session = session;
</script>`)
	if err := chromedp.Do(ctx, chromedp.Navigate(host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the tool's answer", `!!window.log && window.log.transcript.some(l => l.includes("Tool said: "))`)
	got := eval[map[string]any](t, ctx, `window.log`)
	if tr := fmt.Sprint(got["transcript"]); !strings.Contains(tr, "assistant: Hello from the Gemini fake.") {
		t.Errorf("transcript %s", tr)
	}
	if tools := fmt.Sprint(got["tools"]); !strings.Contains(tools, "lookup_order") || !strings.Contains(tools, "shipped on March 3") {
		t.Errorf("toolCall events %s", tools)
	}
	if states := fmt.Sprint(got["states"]); !strings.Contains(states, "speaking") || len(got["errors"].([]any)) != 0 {
		t.Errorf("states %s, errors %v", states, got["errors"])
	}
	live.mu.Lock()
	token, reply := live.token, live.toolReply
	live.mu.Unlock()
	if !strings.HasPrefix(token, "auth_tokens/") || !strings.Contains(reply, "shipped on March 3") {
		t.Errorf("token %q, toolResponse %q", token, reply)
	}
	select {
	case <-hooked:
	case <-time.After(5 * time.Second):
		t.Error("the webhook tool was not called")
	}
	eval[any](t, ctx, `window.session.end()`)
	poll(t, ctx, "ended", `window.log.states.at(-1) === "ended"`)
}

// OpenAI's official browser SDK, @openai/agents-realtime, connects to the
// sandbox with the client secret of /widget/v1/session and hears the
// sandbox's greeting: agentline's token is an ordinary provider token.
func TestOfficialOpenAISDK(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "@openai/agents-realtime")
	ctx := newBrowser(t)
	site := newSDKSite(t, false, map[string]any{})
	site.pages["/oai.js"] = bundleNPM(t, nm, `export { RealtimeAgent, RealtimeSession } from "@openai/agents-realtime";`)
	site.pages["/"] = `<!doctype html><title>Official SDK</title><script type="module">
import { RealtimeAgent, RealtimeSession } from "/oai.js";
window.log = { transcripts: [], error: "" };
try {
  const s = await (await fetch("` + site.s.URL + `/widget/v1/session", { method: "POST",
    headers: { "X-API-Key": "` + site.key + `", "Content-Type": "application/json" },
    body: JSON.stringify({ agent_id: ` + itoa(site.a.ID) + ` }) })).json();
  const session = new RealtimeSession(new RealtimeAgent({ name: "agentline" }), { transport: "webrtc" });
  session.on("transport_event", (e) => { if (e.type === "response.output_audio_transcript.done") window.log.transcripts.push(e.transcript); });
  await session.connect({ apiKey: s.client_secret, url: s.connect.url });
  window.log.connected = true;
} catch (e) { window.log.error = String((e && e.stack) || e); }
</script>`
	if err := chromedp.Do(ctx, chromedp.Navigate(site.host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "connected, or an error", `!!window.log && (window.log.connected || window.log.error !== "")`)
	if e := eval[string](t, ctx, `window.log.error`); e != "" {
		t.Fatalf("the official SDK failed: %s", e)
	}
	poll(t, ctx, "the sandbox's greeting", `window.log.transcripts.some(x => x.includes("agentline sandbox"))`)
	if site.s.App.Sandbox.Calls() != 1 {
		t.Errorf("%d sandbox calls", site.s.App.Sandbox.Calls())
	}
}
