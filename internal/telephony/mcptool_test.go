package telephony_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/tools/mcptest"
)

// A phone call whose model calls tools served by two independent MCP
// servers on loopback (the npm reference server and one built with the Go
// SDK): the relay offers the allowed tools under their
// prefixed names, runs each function call through tools/call, and sends the
// output back; a tool error, a server dropping the connection mid-call and
// an unreachable server leave the call going, each recorded.
func TestPhoneCallUsesMCPTools(t *testing.T) {
	t.Parallel()
	srv := mcptest.New(t, "phone-mcp-token-8841")
	everything := mcptest.StartEverything(t)
	e := newPhoneEnv(t, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	for _, body := range []map[string]any{
		{"type": "mcp", "name": "shop", "url": srv.URL(), "headers": map[string]string{"Authorization": "Bearer phone-mcp-token-8841"},
			"allowed_tools": []string{"lookup_order", "always_fails", "hang_up"}},
		{"type": "mcp", "name": "gone", "url": "http://127.0.0.1:1/mcp"},
		{"type": "mcp", "name": "ref", "url": everything, "allowed_tools": []string{"get-sum"}},
	} {
		if res := e.do(e.owner, "POST", fmt.Sprintf("/api/agents/%d/tools", e.ada), body); res.status != 201 {
			t.Fatalf("create tool: %d %s", res.status, res.body)
		}
	}
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	ev, _ := ss.WaitType(ctx, "session.update")
	raw := string(ev.Raw)
	if !strings.Contains(raw, `"name":"shop__lookup_order"`) || !strings.Contains(raw, "order_id") || !strings.Contains(raw, `"name":"ref__get-sum"`) ||
		strings.Contains(raw, "extra_tool") || strings.Contains(raw, "gone__") || strings.Contains(raw, "ref__echo") {
		t.Fatalf("tools offered: %s", raw)
	}
	calls := []struct{ id, name, args, want string }{
		{"call_1", "shop__lookup_order", `{"order_id":"A17"}`, "order A17: shipped"},
		{"call_2", "shop__always_fails", `{}`, `tool_error`},
		{"call_3", "shop__hang_up", `{}`, `\"error\"`},
		{"call_4", "gone__anything", `{}`, `unreachable`},
		{"call_5", "shop__lookup_order", `{"order_id":"B2"}`, "order B2: shipped"},
		{"call_6", "ref__get-sum", `{"a":40,"b":2}`, "42"},
	}
	for _, call := range calls {
		ss.Send(ctx, map[string]any{"type": "response.created"})
		ss.Send(ctx, map[string]any{"type": "response.function_call_arguments.done", "call_id": call.id, "name": call.name, "arguments": call.args})
		ss.Send(ctx, map[string]any{"type": "response.done"})
		out, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool {
			return ev.Type == "conversation.item.create" && strings.Contains(string(ev.Raw), `"call_id":"`+call.id+`"`)
		})
		if err != nil {
			t.Fatalf("%s: %v", call.name, err)
		}
		if !strings.Contains(string(out.Raw), call.want) {
			t.Fatalf("%s: output item = %s", call.name, out.Raw)
		}
	}
	c.Stop(ctx)
	rec := e.record(c.CallSID)
	events := fmt.Sprint(rec["events"])
	for _, want := range []string{"shop__lookup_order", "order A17: shipped", "tool_error", "shop__hang_up", "ref__get-sum"} {
		if !strings.Contains(events, want) {
			t.Fatalf("events lack %q: %s", want, events)
		}
	}
	if strings.Contains(events, "phone-mcp-token-8841") {
		t.Fatal("the MCP token is in the call's record")
	}
}
