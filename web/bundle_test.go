package web

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/evanw/esbuild/pkg/api"
)

// The widget is one classic script with the SDK inside, and /sdk/client.js
// one ES module exporting the SDK's API.
func TestWidgetIsBuiltOnTheSDK(t *testing.T) {
	a := loadAssets(t)
	if bytes.Contains(a.Widget.Raw, []byte("import ")) || bytes.Contains(a.Widget.Raw, []byte("@agentline/client")) {
		t.Error("the widget bundle still imports: it must be one classic script")
	}
	for _, want := range []string{"tools/execute", "heartbeat", "pagehide", "SvcChat", "public-key"} {
		if !bytes.Contains(a.Widget.Raw, []byte(want)) {
			t.Errorf("the widget bundle lacks %q", want)
		}
	}
	if !bytes.Contains(a.SDK.Raw, []byte("export{")) {
		t.Errorf("/sdk/client.js is not an ES module: %.200s", a.SDK.Raw)
	}
	for _, name := range []string{"createClient", "AgentlineError", "HEARTBEAT_MS"} {
		if !bytes.Contains(a.SDK.Raw, []byte(" as "+name)) && !bytes.Contains(a.SDK.Raw, []byte(name+",")) && !bytes.Contains(a.SDK.Raw, []byte(name+"}")) {
			t.Errorf("/sdk/client.js does not export %s", name)
		}
	}
	t.Logf("sdk/client.js: %d B minified, %d B gzipped", len(a.SDK.Raw), len(a.SDK.Gzip))

	// One implementation of the session lifecycle: the view's own source
	// neither talks to /widget/v1 nor opens the microphone or a provider
	// session; all of that is the SDK's (only the form gate's submission
	// is the view's, and it is not a session).
	view, err := files.ReadFile("chat-widget.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, lifecycle := range []string{"/widget/v1", "RTCPeerConnection", "WebSocket", "getUserMedia", "oai-events", "tools/execute", "analytics", "heartbeat", "pagehide", "sendBeacon"} {
		if bytes.Contains(view, []byte(lifecycle)) {
			t.Errorf("web/chat-widget.js (the view) has %q: that is the SDK's part", lifecycle)
		}
	}
	if n := bytes.Count(view, []byte("fetch(")); n != 1 || !bytes.Contains(view, []byte("/api/channels/form/submit/")) {
		t.Errorf("the view fetches %d times; want only the form gate's submission", n)
	}
}

// The bundle holds agentline's code only: any import but the SDK's fails
// the build, and so does a syntax error in an SDK file.
func TestBundleRefusesOtherImports(t *testing.T) {
	if _, err := bundle("x.js", []byte(`import "left-pad";`), api.FormatIIFE); err == nil || !strings.Contains(err.Error(), "left-pad") {
		t.Fatalf("bundle with a foreign import: %v", err)
	}
	broken := fstest.MapFS{"index.js": {Data: []byte("export function (")}}
	res := api.Build(api.BuildOptions{Stdin: &api.StdinOptions{Contents: `import "@agentline/client";`}, Bundle: true,
		Plugins: []api.Plugin{sdkPlugin(broken)}})
	if len(res.Errors) == 0 {
		t.Fatal("a broken SDK file bundled")
	}
}

// The console's bundle takes its own modules, relative to the importing
// file (pages/ import ../), and leaves the server's paths to the browser; a
// package import, or a path out of the console's folder, fails the build.
func TestConsoleBundle(t *testing.T) {
	fsys := fstest.MapFS{
		"c/dom.js":         {Data: []byte(`export const hello = "from dom";`)},
		"c/pages/agent.js": {Data: []byte(`import {hello} from "../dom.js"; import {more} from "./more.js"; export const page = hello + more;`)},
		"c/pages/more.js":  {Data: []byte(`export const more = " and from pages";`)},
		"outside.js":       {Data: []byte(`export const x = 1;`)},
	}
	out, err := bundleWith("app.js", []byte(`import {page} from "./pages/agent.js"; console.log(page, import("/sdk/client.js"));`),
		api.FormatESModule, consolePlugin(fsys, "c"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("from dom")) || !bytes.Contains(out, []byte("and from pages")) || !bytes.Contains(out, []byte(`import("/sdk/client.js")`)) {
		t.Errorf("console bundle: %s", out)
	}
	for _, bad := range []string{`import "left-pad";`, `import "../outside.js";`, `import "./pages/../../outside.js";`} {
		if _, err := bundleWith("app.js", []byte(bad), api.FormatESModule, consolePlugin(fsys, "c")); err == nil {
			t.Errorf("the console bundle took %s", bad)
		}
	}
}
