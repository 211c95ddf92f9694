package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/app/apptest"
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
	webhookURL, hooked := webhookTool(t, `{"status":"shipped"}`, 1)
	w := startWidgetSite(t, store.SQLite, map[string]string{"AGENTLINE_REDIS_URL": redistest.Start(t)})
	fake, a := w.provider, w.agent
	w.s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", w.token, map[string]any{"name": "lookup_order", "description": "Find an order",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}, "url": webhookURL}, nil)

	widget := func(method, path string, body any) *apptest.Response { return w.do(t, method, path, body) }
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
