package tools

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/secretbox"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/tools/mcptest"
)

// testBox is a secretbox with a fixed test key.
func testBox(t *testing.T) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New([][]byte{[]byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// addMCP stores an MCP source for the agent, its headers sealed.
func (e *env) addMCP(t *testing.T, box *secretbox.Box, tool agentline.WebhookTool) agentline.WebhookTool {
	t.Helper()
	tool.Type, tool.ProjectID, tool.AgentID = agentline.ToolMCP, e.agent.ProjectID, e.agent.ID
	if err := validateMCPTool(&tool, true); err != nil {
		t.Fatal(err)
	}
	h := &Handler{sealer: box}
	if err := h.seal(&tool); err != nil {
		t.Fatal(err)
	}
	tool, err := e.db.CreateTool(context.Background(), tool)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func defNames(defs []agentline.ToolDefinition) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

func TestMCPToolsOfferedAndCalled(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	e := newEnv(t, db)
	box := testBox(t)
	srv := mcptest.New(t, "s3cret-mcp-token-value")
	f := New(db, Options{AllowPrivateWebhooks: true, Logger: quiet, Sealer: box})
	t.Cleanup(func() { _ = f.Close() })
	e.addMCP(t, box, agentline.WebhookTool{Name: "shop", URL: srv.URL(), Headers: map[string]string{"Authorization": "Bearer s3cret-mcp-token-value"},
		AllowedTools: []string{"lookup_order", "always_fails", "hang_up"}})
	ctx := context.Background()

	defs, err := f.Definitions(ctx, e.agent)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(defNames(defs), ",")
	if got != "shop__always_fails,shop__hang_up,shop__lookup_order" {
		t.Fatalf("definitions = %s; want the three allowed tools, prefixed (extra_tool filtered out)", got)
	}
	var schema map[string]any
	if err := json.Unmarshal(defs[2].Parameters, &schema); err != nil || schema["type"] != "object" ||
		!strings.Contains(string(defs[2].Parameters), "order_id") {
		t.Fatalf("lookup_order schema = %s", defs[2].Parameters)
	}

	res, err := f.Execute(ctx, e.agent, agentline.ToolCall{CallID: "c1", Name: "shop__lookup_order", Arguments: json.RawMessage(`{"order_id":"A17"}`)})
	if err != nil || res.IsError || res.Output != "order A17: shipped" {
		t.Fatalf("lookup = %+v, %v", res, err)
	}
	if srv.SeenAuth.Load() != "Bearer s3cret-mcp-token-value" {
		t.Fatalf("the server did not get the stored Authorization header")
	}
	res, err = f.Execute(ctx, e.agent, agentline.ToolCall{CallID: "c2", Name: "shop__always_fails"})
	if err != nil || errorCode(t, res) != "tool_error" || !strings.Contains(res.Output, "warehouse is offline") {
		t.Fatalf("always_fails = %+v, %v", res, err)
	}
	res, err = f.Execute(ctx, e.agent, agentline.ToolCall{CallID: "c3", Name: "shop__extra_tool"})
	if err != nil || errorCode(t, res) != "unknown_tool" {
		t.Fatalf("a tool outside allowed_tools = %+v, %v", res, err)
	}
	res, err = f.Execute(ctx, e.agent, agentline.ToolCall{CallID: "c4", Name: "shop"})
	if err != nil || errorCode(t, res) != "unknown_tool" {
		t.Fatalf("the source's own name = %+v, %v", res, err)
	}
	// The server drops the connection mid-call: a tool error, and the next
	// call reconnects.
	res, err = f.Execute(ctx, e.agent, agentline.ToolCall{CallID: "c5", Name: "shop__hang_up"})
	if err != nil || !res.IsError {
		t.Fatalf("hang_up = %+v, %v", res, err)
	}
	if c := errorCode(t, res); c != "unreachable" && c != "mcp_error" {
		t.Fatalf("hang_up code = %s", c)
	}
	res, err = f.Execute(ctx, e.agent, agentline.ToolCall{CallID: "c6", Name: "shop__lookup_order", Arguments: json.RawMessage(`{"order_id":"B2"}`)})
	if err != nil || res.Output != "order B2: shipped" {
		t.Fatalf("lookup after the drop = %+v, %v", res, err)
	}
}

func TestMCPUnreachableServerOffersNothing(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	e := newEnv(t, db)
	box := testBox(t)
	srv := mcptest.New(t, "")
	f := New(db, Options{AllowPrivateWebhooks: true, Logger: quiet, Sealer: box})
	t.Cleanup(func() { _ = f.Close() })
	e.addTool(t, e.agent, agentline.WebhookTool{Name: "hook", URL: "http://127.0.0.1:1/x"})
	e.addMCP(t, box, agentline.WebhookTool{Name: "down", URL: "http://127.0.0.1:1/mcp"})
	e.addMCP(t, box, agentline.WebhookTool{Name: "up", URL: srv.URL(), AllowedTools: []string{"lookup_order"}})
	defs, err := f.Definitions(context.Background(), e.agent)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(defNames(defs), ","); got != "hook,up__lookup_order" {
		t.Fatalf("definitions = %s", got)
	}
	res, err := f.Execute(context.Background(), e.agent, agentline.ToolCall{Name: "down__anything"})
	if err != nil || errorCode(t, res) != "unreachable" {
		t.Fatalf("call to the unreachable server = %+v, %v", res, err)
	}
}

// A tool added on the server reaches the next session before the cache
// would expire: the server's tools/list_changed notification ends it.
func TestMCPListChangedRefreshesTheTools(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	e := newEnv(t, db)
	srv := mcptest.New(t, "")
	f := New(db, Options{AllowPrivateWebhooks: true, Logger: quiet})
	t.Cleanup(func() { _ = f.Close() })
	e.addMCP(t, nil, agentline.WebhookTool{Name: "shop", URL: srv.URL()})
	ctx := context.Background()
	defs, err := f.Definitions(ctx, e.agent)
	if err != nil || len(defs) != 4 {
		t.Fatalf("definitions = %v, %v", defNames(defs), err)
	}
	srv.MCP.AddTool(&mcp.Tool{Name: "new_tool", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	for i := 0; ; i++ {
		defs, err = f.Definitions(ctx, e.agent)
		if err == nil && strings.Contains(strings.Join(defNames(defs), ","), "shop__new_tool") {
			break
		}
		if i == 100 {
			t.Fatalf("the new tool never appeared: %v, %v", defNames(defs), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Rotating the encryption key reseals MCP headers; the tool keeps working
// under the new key alone, and its URL is checked by the address policy
// when saved.
func TestMCPHeadersRotateAndURLPolicy(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	e := newEnv(t, db)
	srv := mcptest.New(t, "rotate-me-token-0001")
	oldBox := testBox(t)
	e.addMCP(t, oldBox, agentline.WebhookTool{Name: "shop", URL: srv.URL(), Headers: map[string]string{"Authorization": "Bearer rotate-me-token-0001"}})
	newKey := []byte("fedcba9876543210fedcba9876543210")
	both, err := secretbox.New([][]byte{newKey, []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n, err := db.ResealSecrets(ctx, both.Reseal); err != nil || n != 1 {
		t.Fatalf("reseal = %d, %v", n, err)
	}
	onlyNew, _ := secretbox.New([][]byte{newKey})
	f := New(db, Options{AllowPrivateWebhooks: true, Logger: quiet, Sealer: onlyNew})
	t.Cleanup(func() { _ = f.Close() })
	res, err := f.Execute(ctx, e.agent, agentline.ToolCall{Name: "shop__lookup_order", Arguments: json.RawMessage(`{"order_id":"R1"}`)})
	if err != nil || res.Output != "order R1: shipped" {
		t.Fatalf("call under the new key = %+v, %v", res, err)
	}
	// The API refuses an MCP URL on loopback (private webhooks not allowed).
	status, body := e.do(t, e.owner, "POST", "/api/agents/"+strconv.FormatInt(e.agent.ID, 10)+"/tools",
		map[string]any{"type": "mcp", "name": "inside", "url": srv.URL()})
	if status != 400 || !strings.Contains(string(body), "url") {
		t.Fatalf("loopback MCP URL = %d %s", status, body)
	}
}
