package app_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/ratelimit/redistest"
	"github.com/agentline/agentline/internal/store"
)

// A website visitor's whole path through the wired app: the owner makes an
// agent with a webhook tool, a channel and a key; the widget reads its
// config, starts a session (the fake provider is offered the tool) and runs
// the tool call through the real tool facility to the webhook. Rate limits
// are counted in Redis, as AGENTLINE_REDIS_URL asks.
func TestWidgetThroughTheApp(t *testing.T) {
	t.Parallel()
	fake := providerfake.New("sk-test", "g-test")
	providerSrv := httptest.NewServer(fake)
	defer providerSrv.Close()
	webhookURL, hooked := webhookTool(t, `{"status":"shipped"}`, 1)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": providerSrv.URL, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
		"AGENTLINE_REDIS_URL": redistest.Start(t),
	})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	var c agentline.Channel
	var key struct{ Key string }
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, map[string]any{"name": "lookup_order", "description": "Find an order",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}, "url": webhookURL}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "voice_widget", "name": "site", "agent_id": a.ID}, &c)
	s.Must(t, 201, "POST", "/api/channels/"+itoa(c.ID)+"/key", tok, map[string]any{"allowed_origins": []string{"https://shop.example.com"}}, &key)

	widget := func(method, path string, body any) *apptest.Response {
		req := s.Request(t, method, path, "", body)
		req.Header.Set("X-API-Key", key.Key)
		req.Header.Set("Origin", "https://shop.example.com")
		return s.Send(t, req)
	}
	if r := widget("GET", "/widget/v1/config", nil); r.Status != 200 || !strings.Contains(string(r.Body), `"name":"Ada"`) || r.Header.Get("RateLimit-Remaining") != "59" {
		t.Fatalf("config: %s %v", r, r.Header)
	}
	r := widget("POST", "/widget/v1/session", map[string]any{"agent_id": a.ID})
	var sess struct {
		SessionID    string `json:"session_id"`
		ClientSecret string `json:"client_secret"`
	}
	if r.Status != 201 || json.Unmarshal(r.Body, &sess) != nil || !strings.HasPrefix(sess.ClientSecret, "ek_") {
		t.Fatalf("session: %s", r)
	}
	if reqs := fake.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"name":"lookup_order"`) {
		t.Fatalf("provider was offered %+v", reqs)
	}
	r = widget("POST", "/widget/v1/tools/execute", map[string]any{"session_id": sess.SessionID, "call_id": "call_1", "name": "lookup_order", "arguments": `{"id":"42"}`})
	if r.Status != 200 || !strings.Contains(string(r.Body), "shipped") {
		t.Fatalf("tools/execute: %s", r)
	}
	if body := <-hooked; !strings.Contains(body, `"42"`) {
		t.Fatalf("webhook got %q", body)
	}
}
