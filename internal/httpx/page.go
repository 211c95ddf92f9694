package httpx

import (
	"crypto/rand"
	"encoding/base64"
	"html/template"
	"net/http"
)

// messagePage is the whole of a public HTML error answer: one sentence for
// the visitor, never details. It is parsed once and only read afterwards.
var messagePage = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Title}}</title></head>
<body style="{{.Style}}">
<p role="alert">{{.Sentence}}</p>
</body></html>
`))

// MessagePage is how one public page (the form, the widget's embed page)
// looks when it cannot show what was asked for. Each page keeps its own
// title and type so the message sits in its frame like the page would.
type MessagePage struct {
	Title string
	// Style is the body's inline style; the answer's CSP allows only
	// inline styles.
	Style template.CSS
}

// Write answers with sentence on the page. The CSP forbids scripts and
// every fetch, since the page needs neither.
func (p MessagePage) Write(w http.ResponseWriter, status int, sentence string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(status)
	messagePage.Execute(w, struct {
		MessagePage
		Sentence string
	}{p, sentence})
}

// Nonce returns a fresh CSP nonce for one HTML answer, so that a page's
// own inline script and style run under a policy that refuses all others.
func Nonce() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
