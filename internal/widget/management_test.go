package widget_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline"
)

func TestChannelRoutes(t *testing.T) {
	e := newEnv(t, envOptions{noKeys: true})
	pid, ch := itoa(e.project.ID), "/api/channels/"+itoa(e.channel.ID)
	tests := []struct {
		name, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		{"list", "GET", "/api/projects/" + pid + "/channels", e.owner, nil, 200, ""},
		{"list as viewer", "GET", "/api/projects/" + pid + "/channels", e.viewer, nil, 200, ""},
		{"list without sign-in", "GET", "/api/projects/" + pid + "/channels", "", nil, 401, agentline.EUnauthorized},
		{"list another tenant's", "GET", "/api/projects/" + itoa(e.other.ID) + "/channels", e.viewer, nil, 404, agentline.ENotFound},
		{"create form without agent", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"type": "form", "name": "leads"}, 201, ""},
		{"create as viewer", "POST", "/api/projects/" + pid + "/channels", e.viewer, map[string]any{"type": "form", "name": "x"}, 403, agentline.EForbidden},
		{"create without type", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"name": "x", "agent_id": e.agent.ID}, 400, agentline.EInvalid},
		{"create unknown type", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"type": "sms", "name": "x"}, 400, agentline.EInvalid},
		{"create widget without agent", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"type": "voice_widget", "name": "x"}, 400, agentline.EInvalid},
		{"create with another project's agent", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"type": "voice_widget", "name": "x", "agent_id": e.otherAgent.ID}, 400, agentline.EInvalid},
		{"create with bad color", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"type": "form", "name": "x", "settings": map[string]any{"color": "red"}}, 400, agentline.EInvalid},
		{"create with bad position", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"type": "form", "name": "x", "settings": map[string]any{"position": "top"}}, 400, agentline.EInvalid},
		{"create with unknown field", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"type": "form", "name": "x", "colour": "#ffffff"}, 400, agentline.EInvalid},
		{"create with agent_id a string", "POST", "/api/projects/" + pid + "/channels", e.owner, map[string]any{"type": "voice_widget", "name": "x", "agent_id": "1"}, 400, agentline.EInvalid},
		{"create with malformed JSON", "POST", "/api/projects/" + pid + "/channels", e.owner, `{"type":`, 400, agentline.EInvalid},
		{"get", "GET", ch, e.viewer, nil, 200, ""},
		{"get bad id", "GET", "/api/channels/abc", e.owner, nil, 404, agentline.ENotFound},
		{"get missing", "GET", "/api/channels/99999", e.owner, nil, 404, agentline.ENotFound},
		{"patch settings", "PATCH", ch, e.owner, map[string]any{"settings": map[string]any{"color": "#AABBCC", "show_text_chat": true}}, 200, ""},
		{"patch type", "PATCH", ch, e.owner, map[string]any{"type": "form"}, 400, agentline.EInvalid},
		{"patch agent to null on a widget", "PATCH", ch, e.owner, map[string]any{"agent_id": nil}, 400, agentline.EInvalid},
		{"patch agent to another project's", "PATCH", ch, e.owner, map[string]any{"agent_id": e.otherAgent.ID}, 400, agentline.EInvalid},
		{"patch as viewer", "PATCH", ch, e.viewer, map[string]any{"name": "x"}, 403, agentline.EForbidden},
		{"delete as viewer", "DELETE", ch, e.viewer, nil, 403, agentline.EForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code := e.errorCode(tt.method, tt.path, tt.token, "", tt.body)
			if status != tt.status || code != tt.code {
				t.Fatalf("status %d code %q, want %d %q", status, code, tt.status, tt.code)
			}
		})
	}
	// Another tenant's channel answers exactly like a missing one.
	var stranger agentline.Channel
	e.do("POST", "/api/projects/"+pid+"/channels", e.owner, "", map[string]any{"type": "form", "name": "x"}, 201, &stranger)
	_, outsiderToken := e.newUser("outsider@example.com")
	for _, suffix := range []string{"", "/key"} {
		theirs := e.request("GET", "/api/channels/"+itoa(stranger.ID)+suffix, outsiderToken, "", nil)
		missing := e.request("GET", "/api/channels/987654321"+suffix, outsiderToken, "", nil)
		a, b := readAll(theirs), readAll(missing)
		if theirs.StatusCode != 404 || missing.StatusCode != 404 || a != b {
			t.Fatalf("another tenant's channel%s: %d %s vs missing: %d %s", suffix, theirs.StatusCode, a, missing.StatusCode, b)
		}
	}

	var got agentline.Channel
	e.do("GET", ch, e.owner, "", nil, 200, &got)
	if got.Settings.Color != "#aabbcc" || !got.Settings.ShowTextChat || got.Settings.Position != "bottom-right" || got.Name != "site" || *got.AgentID != e.agent.ID {
		t.Fatalf("after patch: %+v", got)
	}
	e.do("PATCH", ch, e.owner, "", map[string]any{"agent_id": e.gemini.ID}, 200, &got)
	if *got.AgentID != e.gemini.ID {
		t.Fatalf("agent not changed: %+v", got)
	}
	e.do("DELETE", ch, e.owner, "", nil, 204, nil)
	if status, _ := e.errorCode("GET", ch, e.owner, "", nil); status != 404 {
		t.Fatalf("deleted channel: %d", status)
	}
}

func TestKeyRoutes(t *testing.T) {
	e := newEnv(t, envOptions{noKeys: true})
	path := "/api/channels/" + itoa(e.channel.ID) + "/key"
	// A channel without a key answers null, not an error: it is the state
	// of every new channel, and the console shows it.
	if resp := e.request("GET", path, e.owner, "", nil); resp.StatusCode != 200 || strings.TrimSpace(readAll(resp)) != "null" {
		t.Fatalf("key before creation: %d", resp.StatusCode)
	}
	if status, _ := e.errorCode("POST", path, e.viewer, "", nil); status != 403 {
		t.Fatalf("viewer creates key: %d", status)
	}
	var created struct {
		Key    string `json:"key"`
		Prefix string `json:"prefix"`
	}
	e.do("POST", path, e.owner, "", nil, 201, &created)
	if !strings.HasPrefix(created.Key, "svc_pk_") || len(created.Key) < len("svc_pk_")+32 || created.Prefix != created.Key[:11] {
		t.Fatalf("created = %+v", created)
	}
	var shown map[string]any
	e.do("GET", path, e.viewer, "", nil, 200, &shown)
	for _, f := range []string{"prefix", "allowed_origins", "rate_limit_per_minute", "rate_limit_per_day", "created_at", "last_used_at"} {
		if _, ok := shown[f]; !ok {
			t.Fatalf("GET key lacks %s: %v", f, shown)
		}
	}
	if _, ok := shown["key"]; ok {
		t.Fatalf("GET key shows the whole key: %v", shown)
	}

	tests := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"origins", map[string]any{"allowed_origins": []string{"https://shop.example.com", "*.example.org"}}, 200, ""},
		{"bad origin named", map[string]any{"allowed_origins": []string{"https://ok.example.com", "example.com"}}, 400, "allowed_origins[1]"},
		{"null origin", map[string]any{"allowed_origins": []string{"null"}}, 400, "allowed_origins[0]"},
		{"limits", map[string]any{"rate_limit_per_minute": 10, "rate_limit_per_day": 100}, 200, ""},
		{"zero per minute", map[string]any{"rate_limit_per_minute": 0}, 400, "rate_limit_per_minute"},
		{"negative per day", map[string]any{"rate_limit_per_day": -1}, 400, "rate_limit_per_day"},
		{"per day a string", map[string]any{"rate_limit_per_day": "10"}, 400, "rate_limit_per_day"},
		{"unknown field", map[string]any{"origins": []string{}}, 400, "origins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.request("PATCH", path, e.owner, "", tt.body)
			defer resp.Body.Close()
			var eb struct{ Error struct{ Field string } }
			decodeBody(t, resp, &eb)
			if resp.StatusCode != tt.status || eb.Error.Field != tt.field {
				t.Fatalf("status %d field %q, want %d %q", resp.StatusCode, eb.Error.Field, tt.status, tt.field)
			}
		})
	}
	var k agentline.WidgetKey
	e.do("GET", path, e.owner, "", nil, 200, &k)
	if len(k.AllowedOrigins) != 2 || k.RateLimitPerMinute != 10 || *k.RateLimitPerDay != 100 {
		t.Fatalf("key = %+v", k)
	}
	e.do("PATCH", path, e.owner, "", map[string]any{"rate_limit_per_day": nil}, 200, &k)
	if k.RateLimitPerDay != nil || k.RateLimitPerMinute != 10 {
		t.Fatalf("per day not cleared: %+v", k)
	}
	// POST may set origins and limits in the same step; a bad body makes
	// no key, so the current one keeps working.
	var rotated struct {
		Key            string   `json:"key"`
		AllowedOrigins []string `json:"allowed_origins"`
		PerMinute      int64    `json:"rate_limit_per_minute"`
	}
	e.do("POST", path, e.owner, "", map[string]any{"allowed_origins": []string{"*.Example.net"}, "rate_limit_per_minute": 7}, 201, &rotated)
	if len(rotated.AllowedOrigins) != 1 || rotated.AllowedOrigins[0] != "*.example.net" || rotated.PerMinute != 7 || rotated.Key == created.Key {
		t.Fatalf("POST with settings = %+v", rotated)
	}
	for _, bad := range []struct {
		body   any
		status int
	}{
		{map[string]any{"allowed_origins": []string{"null"}}, 400},
		{`[1]`, 400},
		{`{"key":"svc_pk_mine"}`, 400},
		{`{"allowed_origins":[` + strings.Repeat(`"https://a.example.com",`, 50_000) + `"x"]}`, 413},
	} {
		if status, _ := e.errorCode("POST", path, e.owner, "", bad.body); status != bad.status {
			t.Fatalf("POST key with %.40v: %d, want %d", bad.body, status, bad.status)
		}
	}
	e.do("GET", "/widget/v1/config", "", rotated.Key, nil, 200, nil, "Origin", "https://a.example.net")

	if status, _ := e.errorCode("DELETE", path, e.viewer, "", nil); status != 403 {
		t.Fatalf("viewer revokes: %d", status)
	}
	e.do("DELETE", path, e.owner, "", nil, 204, nil)
	if status, _ := e.errorCode("DELETE", path, e.owner, "", nil); status != 404 {
		t.Fatalf("revoke twice: %d", status)
	}
}
