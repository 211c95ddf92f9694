package widget_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/widget"
)

func TestEmbedPage(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, envOptions{db: db})
		path := "/api/channels/voice/embed/" + itoa(e.channel.ID)
		var form struct {
			ID int64 `json:"id"`
		}
		e.do("POST", "/api/projects/"+itoa(e.project.ID)+"/channels", e.owner, "", map[string]any{"type": "form", "name": "leads"}, 201, &form)
		formKey := e.newKey(form.ID)

		tests := []struct {
			name, path string
			status     int
			contains   string
		}{
			{"the channel's key", path + "?key=" + e.key, 200, `data-public-key="` + e.key + `"`},
			{"no key", path, 401, "no valid key"},
			{"malformed key", path + "?key=svc_pk_short", 401, "no valid key"},
			{"unknown key", path + "?key=svc_pk_" + strings.Repeat("A", 40), 401, "does not belong"},
			{"another channel's key", path + "?key=" + e.secondKey, 401, "does not belong"},
			{"bad channel id", "/api/channels/voice/embed/abc?key=" + e.key, 404, "does not exist"},
			{"missing channel", "/api/channels/voice/embed/99999?key=" + e.key, 401, "does not belong"},
			{"form channel", "/api/channels/voice/embed/" + itoa(form.ID) + "?key=" + formKey, 404, "does not exist"},
			{"script injection in the key", path + "?key=%22%3E%3Cscript%3Ealert(1)%3C/script%3E", 401, "no valid key"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				resp := e.request("GET", tc.path, "", "", nil)
				body := readAll(resp)
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
					t.Errorf("Content-Type %q", ct)
				}
				if !strings.Contains(body, tc.contains) {
					t.Errorf("page lacks %q:\n%s", tc.contains, body)
				}
				if strings.Contains(body, "<script>alert") {
					t.Error("page reflects a script")
				}
			})
		}

		resp := e.request("GET", path+"?key="+e.key, "", "", nil)
		body := readAll(resp)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors *;") {
			t.Errorf("key without origins: CSP %q, want frame-ancestors *", csp)
		}
		for _, want := range []string{`projectId: "` + itoa(e.project.ID) + `"`, `agentId: "` + itoa(e.agent.ID) + `"`, `channelId: "` + itoa(e.channel.ID) + `"`, "frame: true", `src="/chat-widget.js"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		nonce := between(csp, "'nonce-", "'")
		if nonce == "" || !strings.Contains(body, `<script nonce="`+nonce+`">`) {
			t.Errorf("the mount script does not carry the CSP nonce %q", nonce)
		}

		e.do("PATCH", "/api/channels/"+itoa(e.channel.ID)+"/key", e.owner, "",
			map[string]any{"allowed_origins": []string{"https://shop.example.com", "*.example.org"}}, 200, nil)
		resp = e.request("GET", path+"?key="+e.key, "", "", nil)
		readAll(resp)
		want := "frame-ancestors https://shop.example.com https://*.example.org http://*.example.org;"
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, want) {
			t.Errorf("CSP %q, want %q", csp, want)
		}
	})
}

func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return v
}

// The embed page's widget calls the widget API from agentline's own
// origin, which the key's list need not name; other origins stay refused.
func TestOwnOriginMayUseARestrictedKey(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.do("PATCH", "/api/channels/"+itoa(e.channel.ID)+"/key", e.owner, "",
		map[string]any{"allowed_origins": []string{"https://shop.example.com"}}, 200, nil)
	own := e.srv.URL // http://127.0.0.1:port
	h := e.do("GET", "/widget/v1/config", "", e.key, nil, 200, nil, "Origin", own)
	if h.Get("Access-Control-Allow-Origin") != own {
		t.Errorf("ACAO %q, want %q", h.Get("Access-Control-Allow-Origin"), own)
	}
	// A same-origin GET carries no Origin, only Sec-Fetch-Site.
	e.do("GET", "/widget/v1/config", "", e.key, nil, 200, nil, "Sec-Fetch-Site", "same-origin")
	for _, header := range [][]string{
		{"Origin", "http://127.0.0.2" + strings.TrimPrefix(own, "http://127.0.0.1")},
		{"Origin", "http://evil.example"},
		{"Origin", "null"},
		{"Origin", "null", "Sec-Fetch-Site", "same-origin"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		nil,
	} {
		if status, code := e.errorCode("GET", "/widget/v1/config", "", e.key, nil, header...); status != 401 || code != "origin_not_allowed" {
			t.Errorf("%v: %d %s, want 401 origin_not_allowed", header, status, code)
		}
	}
}

func TestSnippets(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, envOptions{db: db})
		var s struct {
			ChannelID   int64   `json:"channel_id"`
			KeyPrefix   *string `json:"key_prefix"`
			Script      string  `json:"script"`
			ScriptMount string  `json:"script_mount"`
			Iframe      string  `json:"iframe"`
			EmbedURL    string  `json:"embed_url"`
			ScriptURL   string  `json:"script_url"`
		}
		path := "/api/channels/" + itoa(e.channel.ID) + "/snippets"
		e.do("GET", path, e.viewer, "", nil, 200, &s)
		base := e.srv.URL
		checks := map[string]string{
			"script tag":  `<script async src="` + base + `/chat-widget.js" data-public-key="` + widget.KeyPlaceholder + `"></script>`,
			"mount":       `window.SvcChat.mount({projectId: "` + itoa(e.project.ID) + `", agentId: "` + itoa(e.agent.ID) + `", channelId: "` + itoa(e.channel.ID) + `", publicKey: "` + widget.KeyPlaceholder + `"})`,
			"after load":  `window.addEventListener("load"`,
			"iframe src":  `<iframe src="` + base + `/api/channels/voice/embed/` + itoa(e.channel.ID) + `?key=` + widget.KeyPlaceholder + `" allow="microphone"`,
			"iframe text": `title="Voice assistant"`,
		}
		for name, want := range checks {
			if !strings.Contains(s.ScriptMount+s.Iframe, want) {
				t.Errorf("%s: snippets lack %q:\n%s\n%s", name, want, s.ScriptMount, s.Iframe)
			}
		}
		// The script snippet is the one tag alone; the two-step form
		// starts with the same tag.
		if oneTag := checks["script tag"] + "\n"; s.Script != oneTag || !strings.HasPrefix(s.ScriptMount, oneTag) {
			t.Errorf("script snippet %q, mount snippet %q", s.Script, s.ScriptMount)
		}
		if s.KeyPrefix == nil || !strings.HasPrefix(e.key, *s.KeyPrefix) {
			t.Errorf("key_prefix %v does not name the key", s.KeyPrefix)
		}
		if strings.Contains(s.Script+s.ScriptMount+s.Iframe, e.key) {
			t.Error("snippets hold the whole key, which the server must not know")
		}

		e.do("DELETE", "/api/channels/"+itoa(e.channel.ID)+"/key", e.owner, "", nil, 204, nil)
		e.do("GET", path, e.owner, "", nil, 200, &s)
		if s.KeyPrefix != nil {
			t.Errorf("key_prefix %q after the key was revoked", *s.KeyPrefix)
		}

		var form struct {
			ID int64 `json:"id"`
		}
		e.do("POST", "/api/projects/"+itoa(e.project.ID)+"/channels", e.owner, "", map[string]any{"type": "form", "name": "leads"}, 201, &form)
		// A lead capture form's snippet is its page's iframe, with no key.
		e.do("GET", "/api/channels/"+itoa(form.ID)+"/snippets", e.owner, "", nil, 200, &s)
		if s.Script != "" || !strings.Contains(s.Iframe, `/api/channels/form/embed/`+itoa(form.ID)+`"`) || strings.Contains(s.Iframe, "key=") {
			t.Errorf("lead capture form snippets: %+v", s)
		}
		for _, tc := range []struct {
			name, path, token string
			status            int
			code              string
		}{
			{"no token", path, "", 401, "unauthorized"},
			{"missing channel", "/api/channels/99999/snippets", e.owner, 404, "not_found"},
			{"bad id", "/api/channels/x/snippets", e.owner, 404, "not_found"},
		} {
			if status, code := e.errorCode("GET", tc.path, tc.token, "", nil); status != tc.status || code != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, status, code, tc.status, tc.code)
			}
		}
	})
}

func TestSnippetsUsePublicURL(t *testing.T) {
	e := newServer(t, envOptions{publicURL: "https://agents.example.com/"})
	e.seed(envOptions{})
	var s struct {
		Script string `json:"script"`
	}
	e.do("GET", "/api/channels/"+itoa(e.channel.ID)+"/snippets", e.owner, "", nil, http.StatusOK, &s)
	if !strings.Contains(s.Script, `src="https://agents.example.com/chat-widget.js"`) {
		t.Errorf("script snippet ignores AGENTLINE_PUBLIC_URL:\n%s", s.Script)
	}
}
