package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/tools/mcptest"
)

// A widget session whose model calls tools of two independent MCP servers
// (the npm reference server and one built with the Go SDK): the provider
// is offered only the allowed tools under prefixed names, with their input
// schemas, and /widget/v1/tools/execute runs them through tools/call; a
// server dropping the connection mid-call and an unreachable one give tool
// errors, and the session goes on.
func TestWidgetSessionUsesMCPTools(t *testing.T) {
	t.Parallel()
	everything := mcptest.StartEverything(t)
	shop := mcptest.New(t, "widget-mcp-token-5512")
	w := startWidgetSite(t, store.SQLite, nil)
	s, tok, fake, a := w.s, w.token, w.provider, w.agent
	for _, tool := range []map[string]any{
		{"type": "mcp", "name": "everything", "url": everything, "allowed_tools": []string{"echo", "get-sum"}},
		{"type": "mcp", "name": "shop", "url": shop.URL(), "headers": map[string]string{"Authorization": "Bearer widget-mcp-token-5512"},
			"allowed_tools": []string{"lookup_order", "hang_up"}},
		{"type": "mcp", "name": "down", "url": "http://127.0.0.1:1/mcp"},
	} {
		s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, tool, nil)
	}
	widget := func(method, path string, body any) *apptest.Response { return w.do(t, method, path, body) }
	r := widget("POST", "/widget/v1/session", map[string]any{"agent_id": a.ID})
	var sess struct {
		SessionID string `json:"session_id"`
	}
	if r.Status != 201 || json.Unmarshal(r.Body, &sess) != nil {
		t.Fatalf("session: %s", r)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("provider requests: %d", len(reqs))
	}
	offered := string(reqs[0].Body)
	for _, want := range []string{`"name":"everything__echo"`, `"name":"everything__get-sum"`, `"name":"shop__lookup_order"`, `"name":"shop__hang_up"`, "order_id"} {
		if !strings.Contains(offered, want) {
			t.Errorf("provider not offered %s: %s", want, offered)
		}
	}
	for _, not := range []string{"extra_tool", "everything__get-tiny-image", "down__"} {
		if strings.Contains(offered, not) {
			t.Errorf("provider offered %s: %s", not, offered)
		}
	}
	for _, call := range []struct{ name, args, want string }{
		{"everything__echo", `{"message":"hello there"}`, "hello there"},
		{"everything__get-sum", `{"a":2,"b":3}`, "5"},
		{"shop__lookup_order", `{"order_id":"A17"}`, "order A17: shipped"},
		{"shop__hang_up", `{}`, `is_error`},
		{"down__anything", `{}`, `unreachable`},
		{"everything__get-tiny-image", `{}`, `unknown_tool`},
		{"shop__lookup_order", `{"order_id":"B2"}`, "order B2: shipped"},
	} {
		r := widget("POST", "/widget/v1/tools/execute", map[string]any{"session_id": sess.SessionID, "call_id": "c-" + call.name, "name": call.name, "arguments": call.args})
		if r.Status != 200 || !strings.Contains(string(r.Body), call.want) {
			t.Fatalf("%s: %s", call.name, r)
		}
	}
}
