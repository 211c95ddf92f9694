package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	jssdk "github.com/agentline/agentline/sdk/js"
)

// widgetBudget is the most the widget script, SDK included, may weigh
// gzipped: 12 KiB since the widget was rebuilt on the client SDK, which
// it bundles.
const widgetBudget = 12 * 1024

func loadAssets(t testing.TB) *Assets {
	t.Helper()
	a, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestWidgetSizeBudget(t *testing.T) {
	a := loadAssets(t)
	src, _ := files.ReadFile("chat-widget.js")
	for _, name := range []string{"index.js", "errors.js", "openai.js", "gemini.js"} {
		b, err := fs.ReadFile(jssdk.Files, name)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	t.Logf("chat-widget.js: source (view and SDK) %d B, bundled %d B, gzipped %d B (budget %d B)",
		len(src), len(a.Widget.Raw), len(a.Widget.Gzip), widgetBudget)
	t.Logf("chat-widget-audio.js: minified %d B, gzipped %d B", len(a.Audio.Raw), len(a.Audio.Gzip))
	if len(a.Widget.Gzip) > widgetBudget {
		t.Fatalf("chat-widget.js is %d bytes gzipped, over the budget of %d", len(a.Widget.Gzip), widgetBudget)
	}
	if len(a.Widget.Raw) >= len(src) {
		t.Fatalf("minified (%d B) is not smaller than the source (%d B)", len(a.Widget.Raw), len(src))
	}
}

func TestMinifiedKeepsThePublicAPI(t *testing.T) {
	a := loadAssets(t)
	for _, want := range []string{"SvcChat", "mount", "unmount", "oai-events", "/widget/v1/", "application/sdp", "function_call_output", "pcm16-capture"} {
		if !bytes.Contains(a.Widget.Raw, []byte(want)) && !bytes.Contains(a.Audio.Raw, []byte(want)) {
			t.Errorf("minified assets lack %q", want)
		}
	}
}

func TestMinifyRejectsBrokenJavaScript(t *testing.T) {
	if _, err := Minify([]byte("function (")); err == nil {
		t.Fatal("Minify accepted a syntax error")
	}
}

func TestServe(t *testing.T) {
	a := loadAssets(t)
	mux := http.NewServeMux()
	for _, r := range a.Routes() {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// A transport that does not add or undo gzip by itself.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	tests := []struct {
		name, path, method, acceptEncoding, ifNoneMatch string
		status                                          int
		gzipped                                         bool
		asset                                           *Asset
	}{
		{name: "gzip", path: "/chat-widget.js", acceptEncoding: "gzip, deflate, br", status: 200, gzipped: true, asset: a.Widget},
		{name: "identity", path: "/chat-widget.js", status: 200, asset: a.Widget},
		{name: "gzip refused", path: "/chat-widget.js", acceptEncoding: "gzip;q=0, br", status: 200, asset: a.Widget},
		{name: "any encoding", path: "/chat-widget.js", acceptEncoding: "*", status: 200, gzipped: true, asset: a.Widget},
		{name: "not modified", path: "/chat-widget.js", acceptEncoding: "gzip", ifNoneMatch: a.Widget.ETag, status: 304, asset: a.Widget},
		{name: "not modified among others", path: "/chat-widget.js", ifNoneMatch: `"x", W/` + a.Widget.ETag, status: 304, asset: a.Widget},
		{name: "stale etag", path: "/chat-widget.js", ifNoneMatch: `"old"`, status: 200, asset: a.Widget},
		{name: "head", path: "/chat-widget.js", method: "HEAD", status: 200, asset: a.Widget},
		{name: "worklet", path: "/chat-widget-audio.js", acceptEncoding: "gzip", status: 200, gzipped: true, asset: a.Audio},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = "GET"
			}
			req, _ := http.NewRequest(method, srv.URL+tc.path, nil)
			req.Header.Set("Accept-Encoding", tc.acceptEncoding)
			if tc.ifNoneMatch != "" {
				req.Header.Set("If-None-Match", tc.ifNoneMatch)
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if got := res.Header.Get("ETag"); got != tc.asset.ETag {
				t.Errorf("ETag %q, want %q", got, tc.asset.ETag)
			}
			if got := res.Header.Get("Cache-Control"); got != "public, max-age=300" {
				t.Errorf("Cache-Control %q", got)
			}
			if got := res.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary %q", got)
			}
			if tc.status == 304 || method == "HEAD" {
				if len(body) != 0 {
					t.Fatalf("%d body bytes on %s/%d", len(body), method, tc.status)
				}
				return
			}
			if got := res.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/javascript") {
				t.Errorf("Content-Type %q", got)
			}
			if tc.gzipped {
				if res.Header.Get("Content-Encoding") != "gzip" {
					t.Fatalf("Content-Encoding %q, want gzip", res.Header.Get("Content-Encoding"))
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			} else if res.Header.Get("Content-Encoding") != "" {
				t.Fatalf("Content-Encoding %q, want none", res.Header.Get("Content-Encoding"))
			}
			if !bytes.Equal(body, tc.asset.Raw) {
				t.Fatalf("body (%d B) is not the minified asset (%d B)", len(body), len(tc.asset.Raw))
			}
		})
	}
}

// Two builds give the same files: a restarted instance, or another one
// behind the same load balancer, answers the ETag a browser holds.
func TestETagIsStrongAndStable(t *testing.T) {
	a, err := build()
	if err != nil {
		t.Fatal(err)
	}
	b, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if a.Widget.ETag != b.Widget.ETag || a.ConsoleJS.ETag != b.ConsoleJS.ETag {
		t.Fatalf("ETags differ between builds: %s %s, %s %s", a.Widget.ETag, b.Widget.ETag, a.ConsoleJS.ETag, b.ConsoleJS.ETag)
	}
	if strings.HasPrefix(a.Widget.ETag, "W/") || !strings.HasPrefix(a.Widget.ETag, `"`) {
		t.Fatalf("ETag %s is not a strong validator", a.Widget.ETag)
	}
	if a.Widget.ETag == a.Audio.ETag {
		t.Fatal("two files share an ETag")
	}
}

// BenchmarkServeWidget is the cost of one gzip answer of the script.
func BenchmarkServeWidget(b *testing.B) {
	a := loadAssets(b)
	req := httptest.NewRequest("GET", "/chat-widget.js", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	for b.Loop() {
		a.Widget.ServeHTTP(httptest.NewRecorder(), req)
	}
}

// BenchmarkBuild is the start-up cost: bundle, minify and compress the
// files (Load does it once in a process).
func BenchmarkBuild(b *testing.B) {
	for b.Loop() {
		if _, err := build(); err != nil {
			b.Fatal(err)
		}
	}
}

// Load builds the files once, but each server's Assets are its own: one
// server's AllowConnect leaves another's console page as it was.
func TestLoadGivesEachItsOwnHeaders(t *testing.T) {
	a, b := loadAssets(t), loadAssets(t)
	// Every file, those added later too: Load copies each one by name.
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range va.NumField() {
		fa, fb := va.Field(i).Interface().(*Asset), vb.Field(i).Interface().(*Asset)
		if fa == fb || !bytes.Equal(fa.Raw, fb.Raw) {
			t.Fatalf("%s: the two loads share its Asset, or differ in its file", va.Type().Field(i).Name)
		}
	}
	a.AllowConnect("https://api.example.com")
	if got := a.Console.Header.Get("Content-Security-Policy"); !strings.Contains(got, "https://api.example.com") {
		t.Fatalf("AllowConnect did not change its own page's CSP: %s", got)
	}
	if got := b.Console.Header.Get("Content-Security-Policy"); got != ConsoleCSP {
		t.Fatalf("another load's CSP changed: %s", got)
	}
	if c := loadAssets(t); c.Console.Header.Get("Content-Security-Policy") != ConsoleCSP {
		t.Fatal("a later load got the changed CSP")
	}
}

// The console's files are served with their types, and the page with a
// Content-Security-Policy that its markup and script keep to: no inline
// script or style, and no innerHTML anywhere in the script.
func TestConsole(t *testing.T) {
	a := loadAssets(t)
	mux := http.NewServeMux()
	for _, r := range a.ConsoleRoutes() {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	tests := []struct {
		path, ctype string
		asset       *Asset
	}{
		{"/", "text/html; charset=utf-8", a.Console},
		{"/console/app.js", "text/javascript; charset=utf-8", a.ConsoleJS},
		{"/console/app.css", "text/css; charset=utf-8", a.ConsoleCSS},
		{"/console/call.js", "text/javascript; charset=utf-8", a.CallJS},
		{"/console/call-worklet.js", "text/javascript; charset=utf-8", a.CallWorklet},
	}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", tc.path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		mux.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != tc.ctype || rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: %d %q %q", tc.path, rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Content-Encoding"))
		}
		if !bytes.Equal(rec.Body.Bytes(), tc.asset.Gzip) {
			t.Errorf("%s: body is not the compressed asset", tc.path)
		}
		if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s: Cache-Control %q; the console must revalidate so that a release reaches it at once", tc.path, got)
		}
		if rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: the console's files are not for other sites", tc.path)
		}
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if csp := rec.Header().Get("Content-Security-Policy"); csp != ConsoleCSP || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("page CSP %q", csp)
	}
	if rec.Header().Get("X-Frame-Options") != "DENY" {
		t.Error("the page may be framed")
	}
	page := rec.Body.String()
	for _, bad := range []string{"<script>", "<style", " style=", " onclick=", " onload="} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds inline code (%q), which its CSP refuses", bad)
		}
	}
	modules, _ := fs.Glob(files, "console/*.js")
	pages, _ := fs.Glob(files, "console/pages/*.js")
	modules = append(modules, pages...)
	if len(pages) == 0 {
		t.Error("no console/pages/*.js embedded")
	}
	var src []byte
	for _, name := range modules {
		code, _ := files.ReadFile(name)
		src = append(src, code...)
		for _, bad := range []string{"innerHTML", "outerHTML =", "insertAdjacentHTML", "document.write", "eval("} {
			if bytes.Contains(code, []byte(bad)) {
				t.Errorf("%s uses %s: API data must reach the page as text", name, bad)
			}
		}
		// Every endpoint the console calls is a function of console/api.js.
		for _, bad := range []string{"fetch(", "/api/"} {
			if name != "console/api.js" && bytes.Contains(code, []byte(bad)) {
				t.Errorf("%s has %q: the console reaches the API only through console/api.js", name, bad)
			}
		}
	}
	t.Logf("console: its modules %d B source, %d B minified, %d B gzipped; app.css %d B minified, %d B gzipped",
		len(src), len(a.ConsoleJS.Raw), len(a.ConsoleJS.Gzip), len(a.ConsoleCSS.Raw), len(a.ConsoleCSS.Gzip))
	if len(a.ConsoleJS.Raw) >= len(src) {
		t.Error("the console's script is not minified")
	}
}
