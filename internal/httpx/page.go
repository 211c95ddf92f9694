package httpx

import (
	"crypto/rand"
	"encoding/base64"
	"html/template"
	"net/http"
)

// messagePage is the whole of a public HTML error answer: one sentence for
// the visitor, never details. It is parsed once and only read afterwards.
var messagePage = template.Must(template.New("message").Parse(PageHead + `<title>{{.Title}}</title></head>
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
	WriteHTML(w, status, "default-src 'none'; style-src 'unsafe-inline'", messagePage, struct {
		MessagePage
		Sentence string
	}{p, sentence})
}

// PageHead opens every public HTML page (the form, the widget's embed
// page, the message page) the same way: doctype, language, charset and a
// viewport for phones. Each page's template goes on with its <title>.
const PageHead = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
`

// WriteHTML answers with page executed on data under the Content Security
// Policy csp, as every public HTML page is answered: never cached (each
// answer carries its own nonce or sentence) and sending no referrer, so
// that the page that framed it is not told where its visitors go.
func WriteHTML(w http.ResponseWriter, status int, csp string, page *template.Template, data any) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", csp)
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	page.Execute(w, data)
}

// Nonce returns a fresh CSP nonce for one HTML answer, so that a page's
// own inline script and style run under a policy that refuses all others.
func Nonce() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
