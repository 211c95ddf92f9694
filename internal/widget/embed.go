package widget

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// embedPage runs the widget full-frame, for an <iframe allow="microphone">.
// The mount call carries a per-answer nonce so the page works under the
// strict script-src that the answer sets.
var embedPage = template.Must(template.New("embed").Parse(httpx.PageHead + `<title>Voice assistant</title>
<style nonce="{{.Nonce}}">html,body{margin:0;height:100%;background:#fff}</style>
</head><body>
<script src="/chat-widget.js" data-public-key="{{.Key}}"></script>
<script nonce="{{.Nonce}}">
addEventListener("load", function () {
  SvcChat.mount({projectId: "{{.ProjectID}}", agentId: "{{.AgentID}}", channelId: "{{.ChannelID}}", publicKey: "{{.Key}}", frame: true});
});
</script>
</body></html>
`))

// embed serves GET /api/channels/voice/embed/{channel_id}?key= and, for a
// live chat form channel, GET /api/channels/form/embed-widget/{channel_id}?key=
// (the same widget without an agent: it shows the form gate first). The
// key must be the channel's (401 page otherwise); the page may be framed
// only by the key's allowed origins (any, when the list is empty).
func (h *Handler) embed(w http.ResponseWriter, r *http.Request) {
	gate := strings.HasPrefix(r.URL.Path, "/api/channels/form/")
	channelID, err := httpx.PathID(r, "channel_id")
	if err != nil {
		writeErrorPage(w, http.StatusNotFound, "This assistant does not exist.")
		return
	}
	raw := r.URL.Query().Get("key")
	if !wellFormedKey(raw) {
		writeErrorPage(w, http.StatusUnauthorized, "This assistant isn\u2019t set up correctly: the link has no valid key.")
		return
	}
	key, err := h.keys.get(r.Context(), hashKey(raw))
	if err != nil || key.ChannelID != channelID {
		if err != nil && agentline.ErrorCode(err) != agentline.EInvalidKey { // keyCache.get turns not found into invalid_key
			httpx.Logger(r.Context()).Error("embed page: key lookup", "channel_id", channelID, "err", err)
			writeErrorPage(w, http.StatusServiceUnavailable, "The assistant is unavailable right now. Please try again later.")
			return
		}
		writeErrorPage(w, http.StatusUnauthorized, "This assistant isn\u2019t set up correctly: the key does not belong to it.")
		return
	}
	ch, err := h.store.Channel(r.Context(), key.ProjectID, key.ChannelID)
	if err != nil || ch.AgentID == nil || gate != ch.Settings.FormGate() || (!gate && ch.Type != agentline.ChannelVoiceWidget) {
		writeErrorPage(w, http.StatusNotFound, "This assistant does not exist.")
		return
	}
	agentID := strconv.FormatInt(*ch.AgentID, 10)
	if gate {
		agentID = "" // resolved by the form's submission
	}
	n := httpx.Nonce()
	csp := "frame-ancestors " + frameAncestors(key.AllowedOrigins) + "; script-src 'self' 'nonce-" + n + "'; object-src 'none'; base-uri 'none'"
	httpx.WriteHTML(w, http.StatusOK, csp, embedPage, map[string]string{
		"Nonce": n, "Key": raw,
		"ProjectID": strconv.FormatInt(ch.ProjectID, 10), "ChannelID": strconv.FormatInt(ch.ID, 10),
		"AgentID": agentID,
	})
}

// writeErrorPage is the embed page's answer to a bad key or channel, shown
// in the frame where the widget would be.
func writeErrorPage(w http.ResponseWriter, status int, sentence string) {
	httpx.MessagePage{Title: "Voice assistant unavailable", Style: "font:15px/1.4 system-ui,sans-serif;margin:16px;color:#1f2937"}.Write(w, status, sentence)
}

// frameAncestors turns a key's allowed origins into the sources of a
// frame-ancestors directive. A wildcard entry allows http and https, as it
// does for the widget API; an empty list allows any page.
func frameAncestors(allowed []string) string {
	if len(allowed) == 0 {
		return "*"
	}
	var b strings.Builder
	for i, a := range allowed {
		if i > 0 {
			b.WriteByte(' ')
		}
		if strings.HasPrefix(a, "*.") {
			b.WriteString("https://" + a + " http://" + a)
			continue
		}
		b.WriteString(a)
	}
	return b.String()
}

// snippets is what a site owner pastes; the whole key is never stored, so
// the snippets hold a placeholder for it (the key's prefix tells which key).
type snippets struct {
	ChannelID int64   `json:"channel_id"`
	KeyPrefix *string `json:"key_prefix"`
	// Script is the one tag: the key names the channel, project and agent.
	Script string `json:"script"`
	// ScriptMount is the spec's two-step form: the tag, then
	// SvcChat.mount with explicit options after the load event.
	ScriptMount string `json:"script_mount"`
	Iframe      string `json:"iframe"`
	EmbedURL    string `json:"embed_url"`
	ScriptURL   string `json:"script_url"`
}

// KeyPlaceholder stands for the widget key in snippets.
const KeyPlaceholder = "YOUR_WIDGET_KEY"

// getSnippets serves GET /api/channels/{channel_id}/snippets (PROJECT:VIEW):
// for a voice_widget channel the one script tag, the two-step form with
// SvcChat.mount, and the iframe; for a live
// chat form the same with the gate (no agentId; the embed-widget page); for
// a lead capture form the form page's iframe (no key, no script).
func (h *Handler) getSnippets(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.authorizeChannel(r, agentline.PermView)
	if err != nil {
		return err
	}
	ch, err := h.store.Channel(r.Context(), projectID, channelID)
	if err != nil {
		return err
	}
	gate := ch.Settings.FormGate()
	if (ch.Type == agentline.ChannelVoiceWidget || gate) && ch.AgentID == nil {
		return agentline.Errorf(agentline.EInvalid, "this channel has no agent; set its agent_id first")
	}
	out := snippets{ChannelID: ch.ID}
	if k, err := h.store.WidgetKey(r.Context(), projectID, channelID); err == nil {
		out.KeyPrefix = &k.Prefix
	} else if !errors.Is(err, agentline.ErrNotFound) {
		return err
	}
	base := h.baseURL(r)
	id := strconv.FormatInt(ch.ID, 10)
	if ch.Type == agentline.ChannelForm && !gate {
		out.EmbedURL = base + "/api/channels/form/embed/" + id
		out.Iframe = `<iframe src="` + template.HTMLEscapeString(out.EmbedURL) + `" title="` + template.HTMLEscapeString(ch.Name) + `" style="width:520px;height:640px;border:0"></iframe>` + "\n"
		httpx.WriteJSON(w, http.StatusOK, out)
		return nil
	}
	out.ScriptURL = base + "/chat-widget.js"
	out.EmbedURL = base + "/api/channels/voice/embed/" + id + "?key=" + KeyPlaceholder
	js := func(v int64) string { return strconv.Quote(strconv.FormatInt(v, 10)) }
	agent := ", agentId: " + js(*ch.AgentID)
	if gate {
		out.EmbedURL = base + "/api/channels/form/embed-widget/" + id + "?key=" + KeyPlaceholder
		agent = "" // the form's submission gives the agent
	}
	out.Script = `<script async src="` + template.HTMLEscapeString(out.ScriptURL) + `" data-public-key="` + KeyPlaceholder + `"></script>` + "\n"
	out.ScriptMount = out.Script +
		"<script>\n  window.addEventListener(\"load\", function () {\n    window.SvcChat.mount({projectId: " + js(ch.ProjectID) +
		agent + ", channelId: " + js(ch.ID) + ", publicKey: \"" + KeyPlaceholder + "\"});\n  });\n</script>\n"
	out.Iframe = `<iframe src="` + template.HTMLEscapeString(out.EmbedURL) + `" allow="microphone" title="Voice assistant" style="width:380px;height:560px;border:0"></iframe>` + "\n"
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// baseURL is AGENTLINE_PUBLIC_URL, or else the URL the request came to.
func (h *Handler) baseURL(r *http.Request) string {
	if h.publicURL != "" {
		return h.publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// sameOrigin reports whether a browser's request comes from agentline's
// own origin, as the embed page's widget does: that page is guarded by
// frame-ancestors, not by the widget API's origin list. Browsers send no
// Origin on a same-origin GET, but they do send Sec-Fetch-Site. (A
// non-browser client can send either header; origins only bind browsers.)
func sameOrigin(r *http.Request, header string) bool {
	if header == "" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	if header == "null" {
		return false
	}
	u, err := url.Parse(header)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}
