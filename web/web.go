// Package web holds the files agentline serves to browsers: the widget
// script that site owners embed and its audio worklet, and the web console
// (console/: one page, its modules, bundled into one script, and its
// stylesheet). They are plain
// JavaScript, CSS and HTML in the repository (no npm step); at start they
// are minified with esbuild and gzip-compressed once, then served from
// memory with a strong ETag.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/agentline/agentline/internal/httpx"
)

// The console's page, stylesheet, icon and modules (its type-check
// configuration stays out of the binary).
//
//go:embed chat-widget.js chat-widget-audio.js console/*.html console/*.css console/*.svg console/*.js console/pages/*.js
var files embed.FS

// Asset is one minified file, ready to serve.
type Asset struct {
	Name        string
	ContentType string
	Raw         []byte // minified (HTML as written)
	Gzip        []byte // Raw gzip-compressed
	ETag        string // strong, from Raw
	// Header holds the file's own headers (caching, CORS, CSP).
	Header http.Header
}

// Assets are the browser files, minified and compressed.
type Assets struct {
	Widget *Asset // /chat-widget.js: the widget's view bundled with the SDK
	Audio  *Asset // /chat-widget-audio.js
	SDK    *Asset // /sdk/client.js: @agentline/client as one ES module

	Console    *Asset // the console's page, at /
	ConsoleJS  *Asset // /console/app.js (its modules, pages/*.js among them, bundled in)
	ConsoleCSS *Asset // /console/app.css
	Favicon    *Asset // /favicon.svg, also at /favicon.ico

	// CallJS and CallWorklet are the agent page's "Call this agent"
	// (/console/call.js, /console/call-worklet.js).
	CallJS, CallWorklet *Asset
}

// Content types of the assets.
const (
	typeJS   = "text/javascript; charset=utf-8"
	typeCSS  = "text/css; charset=utf-8"
	typeHTML = "text/html; charset=utf-8"
	typeSVG  = "image/svg+xml"
)

// ConsoleCSP is the console page's Content-Security-Policy: its own script
// and stylesheet only (no inline code), API calls to its own origin, audio
// from blob: URLs (a call's recording, fetched with the token), and no
// framing, so a page of another site cannot overlay it.
const ConsoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; media-src blob:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Load gives the embedded files minified and compressed. It fails only if
// a file does not parse, which the package's tests catch first. They are
// built once in a process: the result depends on the embedded files alone,
// and the tests start hundreds of servers in a few processes, where
// building them at each start was 2 % of the CPU. Each call gets Assets of
// its own, whose headers it may change (AllowConnect) without touching
// another's; the files' bytes are shared and never written.
func Load() (*Assets, error) {
	built, err := builtOnce()
	if err != nil {
		return nil, err
	}
	a := *built
	for _, p := range []**Asset{&a.Widget, &a.Audio, &a.SDK, &a.Console, &a.ConsoleJS, &a.ConsoleCSS, &a.Favicon, &a.CallJS, &a.CallWorklet} {
		own := **p
		*p = &own
	}
	return &a, nil
}

var builtOnce = sync.OnceValues(build)

// build minifies and compresses the embedded files.
func build() (*Assets, error) {
	// Any page may load the widget's script; the worklet is fetched in CORS
	// mode. The cache time is short so that a new release reaches pages
	// within minutes; the ETag makes the revalidation cheap.
	widgetHeader := http.Header{"Cache-Control": {"public, max-age=300"}, "Access-Control-Allow-Origin": {"*"}}
	// The console's page is revalidated on every load, so that it never
	// runs with the script of an older release for long.
	pageHeader := http.Header{
		"Cache-Control": {"no-cache"}, "Content-Security-Policy": {ConsoleCSP},
		"X-Frame-Options": {"DENY"}, "Referrer-Policy": {"no-referrer"},
	}
	consoleHeader := http.Header{"Cache-Control": {"no-cache"}}
	var a Assets
	js, css := transform(api.LoaderJS), transform(api.LoaderCSS)
	asIs := func(src []byte) ([]byte, error) { return src, nil }
	consoleBundler := func(src []byte) ([]byte, error) {
		return bundleWith("console/app.js", src, api.FormatESModule, consolePlugin(files, "console"))
	}
	for _, f := range []struct {
		dst         **Asset
		name, ctype string
		build       func([]byte) ([]byte, error)
		header      http.Header
	}{
		{&a.Widget, "chat-widget.js", typeJS, bundler("chat-widget.js", api.FormatIIFE), widgetHeader},
		{&a.Audio, "chat-widget-audio.js", typeJS, js, widgetHeader},
		{&a.SDK, sdkEntry, typeJS, bundler("client.js", api.FormatESModule), widgetHeader},
		{&a.Console, "console/index.html", typeHTML, asIs, pageHeader},
		{&a.ConsoleJS, "console/app.js", typeJS, consoleBundler, consoleHeader},
		{&a.ConsoleCSS, "console/app.css", typeCSS, css, consoleHeader},
		{&a.CallJS, "console/call.js", typeJS, js, consoleHeader},
		{&a.CallWorklet, "console/call-worklet.js", typeJS, js, consoleHeader},
		{&a.Favicon, "console/favicon.svg", typeSVG, asIs, http.Header{"Cache-Control": {"public, max-age=86400"}}},
	} {
		asset, err := load(f.name, f.build)
		if err != nil {
			return nil, err
		}
		asset.ContentType, asset.Header = f.ctype, f.header
		*f.dst = asset
	}
	return &a, nil
}

// sdkEntry is the source name of /sdk/client.js, which is not a file:
// the SDK's modules re-exported as one.
const sdkEntry = "sdk/client.js"

// transform is a build step that minifies one file with loader.
func transform(loader api.Loader) func([]byte) ([]byte, error) {
	return func(src []byte) ([]byte, error) { return minify(src, loader) }
}

// bundler is a build step that bundles a module with the SDK.
func bundler(name string, format api.Format) func([]byte) ([]byte, error) {
	return func(src []byte) ([]byte, error) { return bundle(name, src, format) }
}

// load reads, builds (minifies or bundles) and compresses a file.
func load(name string, build func([]byte) ([]byte, error)) (*Asset, error) {
	src, err := files.ReadFile(name)
	if name == sdkEntry {
		src, err = []byte(`export * from "`+sdkImport+`";`), nil
	}
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	min, err := build(src)
	if err != nil {
		return nil, fmt.Errorf("web: %s: %w", name, err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(min)
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("web: gzip %s: %w", name, err)
	}
	sum := sha256.Sum256(min)
	return &Asset{
		Name: name, Raw: min, Gzip: gz.Bytes(),
		ETag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`,
	}, nil
}

// Minify minifies JavaScript with esbuild (whitespace, identifiers,
// syntax); it keeps the code's meaning and fails on a syntax error.
func Minify(src []byte) ([]byte, error) { return minify(src, api.LoaderJS) }

func minify(src []byte, loader api.Loader) ([]byte, error) {
	res := api.Transform(string(src), api.TransformOptions{
		Loader:            loader,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		LegalComments:     api.LegalCommentsNone,
	})
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		if e.Location != nil {
			return nil, fmt.Errorf("minify: line %d: %s", e.Location.Line, e.Text)
		}
		return nil, fmt.Errorf("minify: %s", e.Text)
	}
	return res.Code, nil
}

// Routes serves the widget's assets: GET /chat-widget.js, GET
// /chat-widget-audio.js and the SDK as an ES module, GET /sdk/client.js.
func (a *Assets) Routes() []httpx.Route {
	return []httpx.Route{
		{Method: "GET", Pattern: "/chat-widget.js", Auth: httpx.Public, Name: "web.Assets.Widget", Handler: a.Widget},
		{Method: "GET", Pattern: "/chat-widget-audio.js", Auth: httpx.Public, Name: "web.Assets.Audio", Handler: a.Audio},
		{Method: "GET", Pattern: "/sdk/client.js", Auth: httpx.Public, Name: "web.Assets.SDK", Handler: a.SDK},
	}
}

// ConsoleRoutes serves the web console: its page at exactly / (other
// unknown paths keep their JSON 404), its script and stylesheet, and the
// browser call's module and worklet.
func (a *Assets) ConsoleRoutes() []httpx.Route {
	return []httpx.Route{
		{Method: "GET", Pattern: "/{$}", Auth: httpx.Public, Name: "web.Assets.Console", Handler: a.Console},
		{Method: "GET", Pattern: "/console/app.js", Auth: httpx.Public, Name: "web.Assets.ConsoleJS", Handler: a.ConsoleJS},
		{Method: "GET", Pattern: "/console/app.css", Auth: httpx.Public, Name: "web.Assets.ConsoleCSS", Handler: a.ConsoleCSS},
		{Method: "GET", Pattern: "/console/call.js", Auth: httpx.Public, Name: "web.Assets.CallJS", Handler: a.CallJS},
		{Method: "GET", Pattern: "/console/call-worklet.js", Auth: httpx.Public, Name: "web.Assets.CallWorklet", Handler: a.CallWorklet},
		{Method: "GET", Pattern: "/favicon.svg", Auth: httpx.Public, Name: "web.Assets.Favicon", Handler: a.Favicon},
		{Method: "GET", Pattern: "/favicon.ico", Auth: httpx.Public, Name: "web.Assets.Favicon", Handler: a.Favicon},
	}
}

// AllowConnect lets the console page connect to the given origins besides
// its own: the providers' origins, so that the agent page's Test panel can
// reach a real provider (the sandbox is on the console's own origin).
// A scheme source (https:, wss:, http:, ws:) admits every origin of that
// scheme. Origins that do not parse are left out.
func (a *Assets) AllowConnect(origins ...string) {
	extra := ""
	for _, o := range origins {
		switch o {
		case "https:", "wss:", "http:", "ws:":
			extra += " " + o
			continue
		}
		if u, err := url.Parse(o); err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http") {
			ws := "wss"
			if u.Scheme == "http" {
				ws = "ws"
			}
			extra += " " + u.Scheme + "://" + u.Host + " " + ws + "://" + u.Host
		}
	}
	if extra == "" {
		return
	}
	csp := strings.Replace(ConsoleCSP, "connect-src 'self'", "connect-src 'self'"+extra, 1)
	h := a.Console.Header.Clone()
	h.Set("Content-Security-Policy", csp)
	a.Console.Header = h
}

// ServeHTTP answers with the file, gzip-compressed when the client accepts
// it, and 304 when the client's If-None-Match holds the ETag.
func (a *Asset) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range a.Header {
		h[k] = append([]string(nil), v...)
	}
	h.Set("Content-Type", a.ContentType)
	h.Set("ETag", a.ETag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	if etagMatch(r.Header.Get("If-None-Match"), a.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.Raw
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = a.Gzip
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// etagMatch reports whether an If-None-Match header names etag (or is *).
// Weak validators match too, as RFC 9110 wants for If-None-Match.
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip (and
// does not refuse it with q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.TrimSpace(name) != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			return false
		}
		return true
	}
	return false
}
