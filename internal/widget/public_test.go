package widget_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
)

func TestKeys(t *testing.T) {
	e := newEnv(t, envOptions{})
	rotatedAway := e.key
	rotatedTwice := e.newKey(e.channel.ID)
	e.key = e.newKey(e.channel.ID)
	e.do("DELETE", "/api/channels/"+itoa(e.second.ID)+"/key", e.owner, "", nil, 204, nil)
	tests := []struct {
		name, key string
		status    int
		code      string
	}{
		{"current key", e.key, 200, ""},
		{"missing", "", 401, agentline.EInvalidKey},
		{"malformed", "svc_pk_short", 401, agentline.EInvalidKey},
		{"wrong prefix", "sk_live_" + e.key[7:], 401, agentline.EInvalidKey},
		{"bad characters", e.key[:len(e.key)-1] + "!", 401, agentline.EInvalidKey},
		{"well formed but unknown", "svc_pk_" + strings.Repeat("A", 40), 401, agentline.EInvalidKey},
		{"rotated away", rotatedAway, 401, agentline.EInvalidKey},
		{"rotated away twice", rotatedTwice, 401, agentline.EInvalidKey},
		{"revoked", e.secondKey, 401, agentline.EInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code := e.errorCode("GET", "/widget/v1/config", "", tt.key, nil)
			if status != tt.status || code != tt.code {
				t.Fatalf("status %d code %q, want %d %q", status, code, tt.status, tt.code)
			}
		})
	}
	// Unknown keys are remembered too: repeating one costs no more lookups.
	before := e.counting.keyLookups.Load()
	for range 10 {
		e.errorCode("GET", "/widget/v1/config", "", "svc_pk_"+strings.Repeat("B", 40), nil)
	}
	if n := e.counting.keyLookups.Load() - before; n != 1 {
		t.Fatalf("10 requests with one unknown key made %d lookups", n)
	}
	// Another channel's key works, but for its own channel only: it cannot
	// start a session with this channel's agent or touch its sessions.
	third := e.newKey(e.second.ID)
	if status, code := e.errorCode("POST", "/widget/v1/session", "", third, map[string]any{"agent_id": e.agent.ID}); status != 403 || code != agentline.EForbidden {
		t.Fatalf("another channel's key for this agent: %d %s", status, code)
	}
	var s struct {
		SessionID string `json:"session_id"`
	}
	e.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, 201, &s)
	body := map[string]any{"session_id": s.SessionID, "call_id": "c1", "name": "lookup_order", "arguments": map[string]any{"id": "7"}}
	if status, code := e.errorCode("POST", "/widget/v1/tools/execute", "", third, body); status != 404 || code != agentline.ENotFound {
		t.Fatalf("another channel's key executes a tool: %d %s", status, code)
	}
	events := map[string]any{"session_id": s.SessionID, "events": []any{map[string]any{"type": "session_started"}}}
	if status, _ := e.errorCode("POST", "/widget/v1/analytics", "", third, events); status != 404 {
		t.Fatalf("another channel's key reports events: %d", status)
	}
}

func TestOriginsAndCORS(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.do("PATCH", "/api/channels/"+itoa(e.channel.ID)+"/key", e.owner, "", map[string]any{
		"allowed_origins": []string{"https://shop.example.com", "*.example.org"}}, 200, nil)
	tests := []struct {
		name, origin string
		status       int
	}{
		{"exact", "https://shop.example.com", 200},
		{"wildcard subdomain", "https://a.example.org", 200},
		{"wildcard deeper", "https://a.b.example.org", 200},
		{"wildcard apex", "https://example.org", 401},
		{"lookalike", "https://evil-example.org", 401},
		{"suffix attack", "https://example.org.evil.io", 401},
		{"other scheme", "http://shop.example.com", 401},
		{"other port", "https://shop.example.com:8443", 401},
		{"missing", "", 401},
		{"null", "null", 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var header []string
			if tt.origin != "" {
				header = []string{"Origin", tt.origin}
			}
			resp := e.request("GET", "/widget/v1/config", "", e.key, nil, header...)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			acao := resp.Header.Get("Access-Control-Allow-Origin")
			if tt.status == 200 && acao != tt.origin || tt.status != 200 && acao != "" {
				t.Fatalf("Access-Control-Allow-Origin = %q", acao)
			}
			if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Origin") {
				t.Fatalf("no Vary: Origin: %v", resp.Header)
			}
			if tt.status == 401 {
				if _, code := e.errorCode("GET", "/widget/v1/config", "", e.key, nil, header...); code != agentline.EOriginNotAllowed {
					t.Fatalf("code = %s", code)
				}
			}
		})
	}
	// Preflight: 204 with methods and headers for a real origin, nothing
	// for null.
	resp := e.request("OPTIONS", "/widget/v1/session", "", "", nil, "Origin", "https://shop.example.com",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "x-api-key, content-type")
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "https://shop.example.com" || h.Get("Access-Control-Allow-Methods") != "POST" ||
		h.Get("Access-Control-Allow-Headers") != "X-API-Key, Content-Type" || h.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, h)
	}
	resp = e.request("OPTIONS", "/widget/v1/config", "", "", nil, "Origin", "null", "Access-Control-Request-Method", "GET")
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("null preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// An empty list lets every origin in, with CORS headers for it.
	e.do("PATCH", "/api/channels/"+itoa(e.channel.ID)+"/key", e.owner, "", map[string]any{"allowed_origins": []string{}}, 200, nil)
	hd := e.do("GET", "/widget/v1/config", "", e.key, nil, 200, nil, "Origin", "https://anywhere.test")
	if hd.Get("Access-Control-Allow-Origin") != "https://anywhere.test" || !strings.Contains(hd.Get("Access-Control-Expose-Headers"), "RateLimit-Remaining") {
		t.Fatalf("empty list: %v", hd)
	}
}

func TestConfig(t *testing.T) {
	e := newEnv(t, envOptions{})
	var got map[string]any
	h := e.do("GET", "/widget/v1/config", "", e.key, nil, 200, &got)
	want := map[string]any{
		"project": map[string]any{"id": float64(e.project.ID), "name": "Shop", "branding": map[string]any{"display_name": "Shop Inc"}},
		"channel": map[string]any{"id": float64(e.channel.ID), "type": "voice_widget",
			"settings": map[string]any{"color": "#2563eb", "position": "bottom-right", "show_transcript": true, "show_text_chat": true}, "form_gate": false},
		"agents": []any{map[string]any{"id": float64(e.agent.ID), "name": "Ada", "provider": "openai", "voice": "marin", "language": "en"}},
	}
	if a, b := mustJSON(got), mustJSON(want); a != b {
		t.Fatalf("config =\n%s\nwant\n%s", a, b)
	}
	if h.Get("RateLimit-Limit") != "60" || h.Get("RateLimit-Remaining") != "59" || h.Get("RateLimit-Reset") == "" {
		t.Fatalf("rate limit headers: %v", h)
	}
	// Many requests later, the key and the config were each read once.
	for range 20 {
		e.do("GET", "/widget/v1/config", "", e.key, nil, 200, nil)
	}
	if n, m := e.counting.keyLookups.Load(), e.counting.configReads.Load(); n != 1 || m != 1 {
		t.Fatalf("database reads on the hot path: %d key lookups, %d config builds", n, m)
	}
	if n := e.counting.touches.Load(); n != 1 {
		t.Fatalf("last_used_at writes = %d, want 1", n)
	}
	// A change on this instance shows at once.
	e.do("PATCH", "/api/channels/"+itoa(e.channel.ID), e.owner, "", map[string]any{"settings": map[string]any{"position": "bottom-left"}}, 200, nil)
	e.do("GET", "/widget/v1/config", "", e.key, nil, 200, &got)
	if got["channel"].(map[string]any)["settings"].(map[string]any)["position"] != "bottom-left" {
		t.Fatalf("stale config after PATCH: %v", got)
	}
	// last_used_at shows up in the key's record.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var k agentline.WidgetKey
		e.do("GET", "/api/channels/"+itoa(e.channel.ID)+"/key", e.owner, "", nil, 200, &k)
		if k.LastUsedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("last_used_at never recorded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}

// Another instance notices a rotation within its cache TTL.
func TestRotationSeenByAnotherInstance(t *testing.T) {
	a := newEnv(t, envOptions{cacheTTL: 100 * time.Millisecond})
	b := newServer(t, envOptions{db: a.db, cacheTTL: 100 * time.Millisecond})
	b.do("GET", "/widget/v1/config", "", a.key, nil, 200, nil)
	old := a.key
	a.key = a.newKey(a.channel.ID)
	if status, _ := a.errorCode("GET", "/widget/v1/config", "", old, nil); status != 401 {
		t.Fatalf("rotating instance still takes the old key: %d", status)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _ := b.errorCode("GET", "/widget/v1/config", "", old, nil)
		if status == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("other instance kept accepting the rotated key")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.do("GET", "/widget/v1/config", "", a.key, nil, 200, nil)
}

type sessionAnswer struct {
	SessionID      string    `json:"session_id"`
	AgentID        int64     `json:"agent_id"`
	Provider       string    `json:"provider"`
	Model          string    `json:"model"`
	ClientSecret   string    `json:"client_secret"`
	EphemeralToken string    `json:"ephemeral_token"`
	ExpiresAt      time.Time `json:"expires_at"`
	Connect        struct {
		URL      string `json:"url"`
		Protocol string `json:"protocol"`
	} `json:"connect"`
}

func TestSession(t *testing.T) {
	e := newEnv(t, envOptions{})
	var s sessionAnswer
	e.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, 201, &s, "Origin", "https://shop.example.com")
	if !strings.HasPrefix(s.SessionID, "ses_") || s.AgentID != e.agent.ID || s.Provider != "openai" || s.Model != "gpt-realtime" ||
		!strings.HasPrefix(s.ClientSecret, "ek_") || s.EphemeralToken != s.ClientSecret || time.Until(s.ExpiresAt) < time.Minute ||
		!strings.HasSuffix(s.Connect.URL, "/v1/realtime/calls") || s.Connect.Protocol != "webrtc" {
		t.Fatalf("session = %+v", s)
	}
	reqs := e.fake.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"name":"lookup_order"`) || !strings.Contains(string(reqs[0].Body), `"instructions":"Help with orders."`) {
		t.Fatalf("provider got %+v", reqs)
	}
	stored, err := e.db.WidgetSession(context.Background(), e.project.ID, s.SessionID)
	if err != nil || stored.ChannelID != e.channel.ID || stored.Origin != "https://shop.example.com" || stored.Provider != "openai" {
		t.Fatalf("stored = %+v %v", stored, err)
	}

	var g sessionAnswer
	e.do("POST", "/widget/v1/session", "", e.secondKey, map[string]any{"agent_id": e.gemini.ID}, 201, &g)
	if !strings.HasPrefix(g.ClientSecret, "auth_tokens/") || g.Provider != "gemini" || g.Connect.Protocol != "websocket" ||
		!strings.HasPrefix(g.Connect.URL, "ws://") || !strings.HasSuffix(g.Connect.URL, "BidiGenerateContentConstrained") {
		t.Fatalf("gemini session = %+v", g)
	}

	// A session made in advance (a form lead's) is started by its id.
	pre, _ := e.db.CreateWidgetSession(context.Background(), agentline.WidgetSession{ID: "ses_lead1", ProjectID: e.project.ID, ChannelID: e.channel.ID, AgentID: e.agent.ID}, conversation.Started)
	e.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID, "session_id": pre.ID}, 201, &s)
	if s.SessionID != "ses_lead1" {
		t.Fatalf("pre-made session: %+v", s)
	}

	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"no agent_id", map[string]any{}, 400, agentline.EInvalid},
		{"agent_id a string", map[string]any{"agent_id": "1"}, 400, agentline.EInvalid},
		{"unknown field", map[string]any{"agent_id": e.agent.ID, "model": "x"}, 400, agentline.EInvalid},
		{"empty body", "", 400, agentline.EInvalid},
		{"not the channel's agent", map[string]any{"agent_id": e.gemini.ID}, 403, agentline.EForbidden},
		{"another tenant's agent", map[string]any{"agent_id": e.otherAgent.ID}, 403, agentline.EForbidden},
		{"unknown session_id", map[string]any{"agent_id": e.agent.ID, "session_id": "ses_nope"}, 404, agentline.ENotFound},
		{"another channel's session_id", map[string]any{"agent_id": e.agent.ID, "session_id": g.SessionID}, 404, agentline.ENotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code := e.errorCode("POST", "/widget/v1/session", "", e.key, tt.body)
			if status != tt.status || code != tt.code {
				t.Fatalf("status %d code %q, want %d %q", status, code, tt.status, tt.code)
			}
		})
	}
	t.Run("provider down", func(t *testing.T) {
		e.fake.FailWith(500)
		defer e.fake.FailWith(0)
		resp := e.request("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID})
		defer resp.Body.Close()
		var eb struct {
			Error struct{ Code, Message string }
		}
		decodeBody(t, resp, &eb)
		if resp.StatusCode != 502 || eb.Error.Code != agentline.EProvider || strings.Contains(eb.Error.Message, "server had an error") {
			t.Fatalf("%d %+v", resp.StatusCode, eb)
		}
	})
}

func TestSessionProviderNotConfigured(t *testing.T) {
	e := newEnv(t, envOptions{})
	bare := newServer(t, envOptions{db: e.db, noProviderKeys: true})
	for _, a := range []struct {
		key string
		id  int64
	}{{e.key, e.agent.ID}, {e.secondKey, e.gemini.ID}} {
		if status, code := bare.errorCode("POST", "/widget/v1/session", "", a.key, map[string]any{"agent_id": a.id}); status != 503 || code != agentline.ENotConfigured {
			t.Fatalf("agent %d without provider key: %d %s", a.id, status, code)
		}
	}
}

func TestToolsExecute(t *testing.T) {
	e := newEnv(t, envOptions{})
	var s sessionAnswer
	e.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, 201, &s)
	var out map[string]any
	e.do("POST", "/widget/v1/tools/execute", "", e.key, map[string]any{"session_id": s.SessionID, "call_id": "call_1", "name": "lookup_order",
		"arguments": `{"id":"42"}`}, 200, &out)
	if out["call_id"] != "call_1" || out["output"] != `order {"id":"42"} shipped` {
		t.Fatalf("answer = %v", out)
	}
	e.do("POST", "/widget/v1/tools/execute", "", e.key, map[string]any{"session_id": s.SessionID, "call_id": "call_2", "name": "lookup_order",
		"arguments": map[string]any{"id": "43"}}, 200, &out)
	if calls := e.tools.received(); len(calls) != 2 || calls[0].CallID != "call_1" || string(calls[1].Arguments) != `{"id":"43"}` {
		t.Fatalf("facility got %+v", calls)
	}
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"no session", map[string]any{"call_id": "c", "name": "lookup_order"}, 400, agentline.EInvalid},
		{"unknown session", map[string]any{"session_id": "ses_x", "call_id": "c", "name": "lookup_order"}, 404, agentline.ENotFound},
		{"no call_id", map[string]any{"session_id": s.SessionID, "name": "lookup_order"}, 400, agentline.EInvalid},
		{"no name", map[string]any{"session_id": s.SessionID, "call_id": "c"}, 400, agentline.EInvalid},
		{"arguments an array", map[string]any{"session_id": s.SessionID, "call_id": "c", "name": "lookup_order", "arguments": []int{1}}, 400, agentline.EInvalid},
		{"arguments bad JSON string", map[string]any{"session_id": s.SessionID, "call_id": "c", "name": "lookup_order", "arguments": "{"}, 400, agentline.EInvalid},
		{"unknown tool", map[string]any{"session_id": s.SessionID, "call_id": "c", "name": "drop_tables"}, 400, agentline.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code := e.errorCode("POST", "/widget/v1/tools/execute", "", e.key, tt.body)
			if status != tt.status || code != tt.code {
				t.Fatalf("status %d code %q, want %d %q", status, code, tt.status, tt.code)
			}
		})
	}
	// Without a tool facility: no tools offered, execute is not_configured.
	bare := newServer(t, envOptions{db: e.db, noTools: true})
	bare.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, 201, nil)
	if reqs := bare.fake.Requests(); strings.Contains(string(reqs[0].Body), "lookup_order") {
		t.Fatalf("tools offered without a facility: %s", reqs[0].Body)
	}
	if status, code := bare.errorCode("POST", "/widget/v1/tools/execute", "", e.key, map[string]any{"session_id": s.SessionID, "call_id": "c", "name": "lookup_order"}); status != 503 || code != agentline.ENotConfigured {
		t.Fatalf("no facility: %d %s", status, code)
	}
}

func TestAnalyticsAndViews(t *testing.T) {
	e := newEnv(t, envOptions{})
	var s sessionAnswer
	e.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, 201, &s)
	e.do("POST", "/widget/v1/tools/execute", "", e.key, map[string]any{"session_id": s.SessionID, "call_id": "c1", "name": "lookup_order", "arguments": `{"id":"1"}`}, 200, nil)
	now := time.Now().UTC()
	var acc map[string]int
	e.do("POST", "/widget/v1/analytics", "", e.key, map[string]any{"session_id": s.SessionID, "events": []any{
		map[string]any{"type": "session_started", "at": now},
		map[string]any{"type": "transcript", "at": now.Add(time.Second), "data": map[string]any{"role": "user", "text": "Where is my order?"}},
		map[string]any{"type": "transcript", "at": now.Add(2 * time.Second), "data": map[string]any{"role": "assistant", "text": "Shipped."}},
		map[string]any{"type": "error", "data": map[string]any{"message": "audio glitch"}},
		map[string]any{"type": "session_ended", "at": now.Add(30 * time.Second)},
	}}, 202, &acc)
	if acc["accepted"] != 5 {
		t.Fatalf("accepted = %v", acc)
	}
	many := make([]any, 101)
	for i := range many {
		many[i] = map[string]any{"type": "session_started"}
	}
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"unknown type", map[string]any{"session_id": s.SessionID, "events": []any{map[string]any{"type": "click"}}}, 400, agentline.EInvalid},
		{"no events", map[string]any{"session_id": s.SessionID, "events": []any{}}, 400, agentline.EInvalid},
		{"too many events", map[string]any{"session_id": s.SessionID, "events": many}, 413, agentline.ETooLarge},
		{"transcript without role", map[string]any{"session_id": s.SessionID, "events": []any{map[string]any{"type": "transcript", "data": map[string]any{"text": "x"}}}}, 400, agentline.EInvalid},
		{"data not an object", map[string]any{"session_id": s.SessionID, "events": []any{map[string]any{"type": "error", "data": "x"}}}, 400, agentline.EInvalid},
		{"at in the future", map[string]any{"session_id": s.SessionID, "events": []any{map[string]any{"type": "error", "at": now.Add(time.Hour)}}}, 400, agentline.EInvalid},
		{"at not a time", map[string]any{"session_id": s.SessionID, "events": []any{map[string]any{"type": "error", "at": "yesterday"}}}, 400, agentline.EInvalid},
		{"unknown session", map[string]any{"session_id": "ses_x", "events": []any{map[string]any{"type": "error"}}}, 404, agentline.ENotFound},
		{"no session", map[string]any{"events": []any{map[string]any{"type": "error"}}}, 400, agentline.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code := e.errorCode("POST", "/widget/v1/analytics", "", e.key, tt.body)
			if status != tt.status || code != tt.code {
				t.Fatalf("status %d code %q, want %d %q", status, code, tt.status, tt.code)
			}
		})
	}

	var page struct {
		Sessions []struct {
			ID         string `json:"id"`
			ChannelID  int64  `json:"channel_id"`
			DurationMS int64  `json:"duration_ms"`
			Transcript []struct{ Role, Text string }
			ToolCalls  []map[string]any `json:"tool_calls"`
			Errors     []map[string]any `json:"errors"`
		} `json:"sessions"`
		NextOffset *int `json:"next_offset"`
	}
	pid := itoa(e.project.ID)
	e.do("GET", "/api/projects/"+pid+"/sessions?channel_id="+itoa(e.channel.ID), e.viewer, "", nil, 200, &page)
	if len(page.Sessions) != 1 || page.NextOffset != nil {
		t.Fatalf("sessions = %+v", page)
	}
	got := page.Sessions[0]
	if got.ID != s.SessionID || len(got.Transcript) != 2 || got.Transcript[0].Text != "Where is my order?" || got.Transcript[1].Role != "assistant" ||
		len(got.ToolCalls) != 1 || got.ToolCalls[0]["name"] != "lookup_order" || len(got.Errors) != 1 || got.DurationMS <= 0 {
		t.Fatalf("session view = %+v", got)
	}
	e.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, 201, nil)
	e.do("GET", "/api/projects/"+pid+"/sessions?limit=1", e.owner, "", nil, 200, &page)
	if len(page.Sessions) != 1 || page.NextOffset == nil || *page.NextOffset != 1 {
		t.Fatalf("page 1 = %+v", page)
	}
	for _, q := range []string{"limit=0", "limit=x", "offset=-1", "from=yesterday", "channel_id=abc"} {
		if status, code := e.errorCode("GET", "/api/projects/"+pid+"/sessions?"+q, e.owner, "", nil); status != 400 || code != agentline.EInvalid {
			t.Fatalf("%s: %d %s", q, status, code)
		}
	}
	if status, _ := e.errorCode("GET", "/api/projects/"+itoa(e.other.ID)+"/sessions", e.viewer, "", nil); status != 404 {
		t.Fatalf("another tenant's sessions: %d", status)
	}

	var an struct {
		Totals struct {
			Sessions  int64   `json:"sessions"`
			Minutes   float64 `json:"minutes"`
			ToolCalls int64   `json:"tool_calls"`
			Errors    int64   `json:"errors"`
		} `json:"totals"`
		ByDay     []map[string]any `json:"by_day"`
		ByChannel []map[string]any `json:"by_channel"`
	}
	e.do("GET", "/api/projects/"+pid+"/analytics?from="+now.Add(-time.Hour).Format(time.RFC3339)+"&to="+now.Add(time.Hour).Format(time.RFC3339), e.viewer, "", nil, 200, &an)
	if an.Totals.Sessions != 2 || an.Totals.ToolCalls != 1 || an.Totals.Errors != 1 || an.Totals.Minutes <= 0 || len(an.ByChannel) != 1 || len(an.ByDay) < 1 {
		t.Fatalf("analytics = %+v", an)
	}
	for _, q := range []string{"from=2026-03-02&to=2026-03-01", "from=2020-01-01&to=2026-01-01", "to=soon"} {
		if status, _ := e.errorCode("GET", "/api/projects/"+pid+"/analytics?"+q, e.owner, "", nil); status != 400 {
			t.Fatalf("%s: %d", q, status)
		}
	}
}
