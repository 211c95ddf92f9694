// Package web holds the files agentline serves to browsers: the widget
// script that site owners embed and its audio worklet. They are plain
// JavaScript in the repository (no npm step); at start they are minified
// with esbuild and gzip-compressed once, then served from memory with a
// strong ETag.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/agentline/agentline/internal/httpx"
)

//go:embed chat-widget.js chat-widget-audio.js
var files embed.FS

// Asset is one minified file, ready to serve.
type Asset struct {
	Name string
	Raw  []byte // minified
	Gzip []byte // minified and gzip-compressed
	ETag string // strong, from the minified bytes
}

// Assets are the browser files, minified and compressed.
type Assets struct {
	Widget *Asset // /chat-widget.js
	Audio  *Asset // /chat-widget-audio.js
}

// Load minifies and compresses the embedded files. It fails only if a file
// does not parse, which the package's tests catch first.
func Load() (*Assets, error) {
	widget, err := load("chat-widget.js")
	if err != nil {
		return nil, err
	}
	audio, err := load("chat-widget-audio.js")
	if err != nil {
		return nil, err
	}
	return &Assets{Widget: widget, Audio: audio}, nil
}

func load(name string) (*Asset, error) {
	src, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	min, err := Minify(src)
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
func Minify(src []byte) ([]byte, error) {
	res := api.Transform(string(src), api.TransformOptions{
		Loader:            api.LoaderJS,
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

// Routes serves the assets: GET /chat-widget.js and GET /chat-widget-audio.js.
func (a *Assets) Routes() []httpx.Route {
	return []httpx.Route{
		{Method: "GET", Pattern: "/chat-widget.js", Handler: a.Widget},
		{Method: "GET", Pattern: "/chat-widget-audio.js", Handler: a.Audio},
	}
}

// ServeHTTP answers with the file, gzip-compressed when the client accepts
// it, and 304 when the client's If-None-Match holds the ETag. The cache time
// is short so that a new release reaches pages within minutes; the ETag
// makes the revalidation cheap.
func (a *Asset) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", a.ETag)
	h.Set("Vary", "Accept-Encoding")
	// Any page may load the script; the worklet is fetched in CORS mode.
	h.Set("Access-Control-Allow-Origin", "*")
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
