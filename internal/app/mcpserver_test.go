package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// mcpTools are the tools /mcp offers, by name.
var mcpTools = []string{
	"create_agent", "create_channel", "create_channel_key", "create_test_scenario", "get_agent", "get_channel_snippets",
	"get_conversation", "get_test_run", "list_agents", "list_channels", "list_conversations", "list_knowledge_documents",
	"list_test_runs", "list_test_scenarios", "list_tools", "start_test_run", "update_agent",
}

// keyTransport sends an API key with every request, as a coding
// assistant configured with one does.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects the official Go SDK's client to s's /mcp with key.
func mcpConnect(t *testing.T, s *apptest.Server, key string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL + "/mcp",
		HTTPClient: &http.Client{Transport: keyTransport{key}, Timeout: 30 * time.Second}, MaxRetries: 1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// mcpCall calls a tool and returns its result and structured content.
func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s answered %q: %v", name, text, err)
	}
	return res, out
}

// mustCall is mcpCall for a call that must succeed.
func mustCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, out := mcpCall(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): %v", name, args, out)
	}
	return out
}

// refusedCall is mcpCall for a call the API refuses with code and a
// message containing says.
func refusedCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, code, says string) {
	t.Helper()
	res, out := mcpCall(t, cs, name, args)
	e, _ := out["error"].(map[string]any)
	if !res.IsError || e["code"] != code || !strings.Contains(e["message"].(string), says) {
		t.Errorf("%s(%v) = error %v, %v; want %s %q", name, args, res.IsError, out, code, says)
	}
}

func id(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// The official Go SDK's client, with an editor key, lists the tools,
// builds an agent (create, update, get, list), puts it on a widget channel
// whose key is shown once, reads the conversation a widget session made,
// and plays a test run in the sandbox; a viewer key reads but is refused
// creating and changing, another project's key finds nothing of this
// project, and a revoked key or a session token cannot connect.
func TestMCPServerBuildsAndInspectsAgents(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		testMCPServer(t, apptest.Start(t, apptest.Config(t, databaseURL, map[string]string{"AGENTLINE_SANDBOX": "true"})))
	})
}

func testMCPServer(t *testing.T, s *apptest.Server) {
	_, tok := s.NewUser(t, "owner@example.com")
	var shop, other agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &shop)
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Elsewhere"}, &other)
	editor := newKey(t, s, tok, shop.ID, agentline.RoleEditor)
	viewer := newKey(t, s, tok, shop.ID, agentline.RoleViewer)
	stranger := newKey(t, s, tok, other.ID, agentline.RoleOwner)

	cs, err := mcpConnect(t, s, editor.Key)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, mcpTools) {
		t.Fatalf("tools = %v, want %v", names, mcpTools)
	}

	a := mustCall(t, cs, "create_agent", map[string]any{"name": "Ada", "instructions": "Help with orders."})
	if id(a["project_id"]) != shop.ID || a["name"] != "Ada" {
		t.Fatalf("created %v", a)
	}
	agentID := id(a["id"])
	a = mustCall(t, cs, "update_agent", map[string]any{"agent_id": agentID, "greeting": "Hello, how can I help?"})
	if a["greeting"] != "Hello, how can I help?" || a["instructions"] != "Help with orders." {
		t.Fatalf("updated %v", a)
	}
	if got := mustCall(t, cs, "get_agent", map[string]any{"agent_id": agentID}); got["greeting"] != "Hello, how can I help?" {
		t.Fatalf("get_agent %v", got)
	}
	if l := mustCall(t, cs, "list_agents", map[string]any{"limit": 10})["items"].([]any); len(l) != 1 || l[0].(map[string]any)["name"] != "Ada" {
		t.Fatalf("list_agents %v", l)
	}
	s.Must(t, 201, "POST", "/api/agents/"+itoa(agentID)+"/knowledge", tok, map[string]string{"title": "Returns", "content": "Free within 30 days."}, nil)
	if l := mustCall(t, cs, "list_knowledge_documents", map[string]any{"agent_id": agentID})["items"].([]any); len(l) != 1 {
		t.Fatalf("list_knowledge_documents %v", l)
	}
	if l := mustCall(t, cs, "list_tools", map[string]any{"agent_id": agentID})["items"].([]any); len(l) != 0 {
		t.Fatalf("list_tools %v", l)
	}

	ch := mustCall(t, cs, "create_channel", map[string]any{"type": "voice_widget", "name": "Site", "agent_id": agentID})
	channelID := id(ch["id"])
	key := mustCall(t, cs, "create_channel_key", map[string]any{"channel_id": channelID, "allowed_origins": []string{"https://shop.example.com"}})
	widgetKey, _ := key["key"].(string)
	if !strings.HasPrefix(widgetKey, "svc_pk_") {
		t.Fatalf("create_channel_key %v", key)
	}
	// Shown once: nothing else tells the key again.
	snippets := mustCall(t, cs, "get_channel_snippets", map[string]any{"channel_id": channelID})
	if b, _ := json.Marshal(snippets); strings.Contains(string(b), widgetKey) || !strings.Contains(string(b), "YOUR_WIDGET_KEY") ||
		snippets["script_url"] != s.URL+"/chat-widget.js" {
		t.Fatalf("snippets %s", b)
	}
	if r := s.Must(t, 200, "GET", "/api/channels/"+itoa(channelID)+"/key", tok, nil, nil); strings.Contains(string(r.Body), widgetKey) {
		t.Fatalf("key shown again: %s", r)
	}
	if l := mustCall(t, cs, "list_channels", nil)["items"].([]any); len(l) != 1 {
		t.Fatalf("list_channels %v", l)
	}

	// A visitor's widget session is a conversation the tools read.
	req := s.Request(t, "POST", "/widget/v1/session", "", map[string]any{"agent_id": agentID})
	req.Header.Set("X-API-Key", widgetKey)
	req.Header.Set("Origin", "https://shop.example.com")
	if r := s.Send(t, req); r.Status != 201 {
		t.Fatalf("widget session: %s", r)
	}
	convs := mustCall(t, cs, "list_conversations", map[string]any{"agent_id": agentID, "kind": "widget"})["conversations"].([]any)
	if len(convs) != 1 {
		t.Fatalf("list_conversations %v", convs)
	}
	convID := convs[0].(map[string]any)["id"].(string)
	if c := mustCall(t, cs, "get_conversation", map[string]any{"conversation_id": convID}); c["id"] != convID || id(c["agent_id"]) != agentID {
		t.Fatalf("get_conversation %v", c)
	}

	// A test run, played by the sandbox.
	mustCall(t, cs, "create_test_scenario", map[string]any{"agent_id": agentID, "name": "hours", "persona": "A visitor",
		"goal": "Ask the opening hours", "success_criteria": "The agent answers."})
	run := mustCall(t, cs, "start_test_run", map[string]any{"agent_id": agentID})
	if run["status"] != string(agentline.TestRunRunning) {
		t.Fatalf("start_test_run %v", run)
	}
	for i := 0; run["status"] != string(agentline.TestRunCompleted); i++ {
		if i == 600 {
			t.Fatalf("run did not complete: %v", run)
		}
		time.Sleep(50 * time.Millisecond)
		run = mustCall(t, cs, "get_test_run", map[string]any{"run_id": run["id"]})
	}
	if id(run["passed"]) != 1 || len(run["results"].([]any)) != 1 {
		t.Fatalf("run %v", run)
	}
	if l := mustCall(t, cs, "list_test_runs", map[string]any{"agent_id": agentID})["test_runs"].([]any); len(l) != 1 {
		t.Fatalf("list_test_runs %v", l)
	}

	// The edge counts POST /mcp; the tools' API requests are counted apart.
	if m := s.Metrics(t); !strings.Contains(m, `agentline_mcp_tool_calls_total{status="201",tool="create_agent"} 1`) ||
		!strings.Contains(m, `agentline_mcp_tool_calls_total{status="200",tool="get_test_run"}`) {
		t.Errorf("metrics lack the tool calls:\n%s", m)
	}

	// Every tool call is in the project's audit log with the key as its
	// actor, and so is the change the call made through the API.
	var logged struct {
		Entries []agentline.AuditEntry `json:"entries"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(shop.ID)+"/audit-log?actor_kind=api_key&limit=200", tok, nil, &logged)
	calls, creates := 0, 0
	for _, e := range logged.Entries {
		if e.Actor.KeyPrefix != editor.Prefix {
			continue
		}
		switch {
		case e.Action == "mcp.call":
			calls++
		case e.Action == "agent.create" && e.Resource.ID == itoa(agentID):
			creates++
		}
	}
	if calls < 15 || creates != 1 {
		t.Errorf("audit log has %d mcp.call and %d agent.create entries by %s: %+v", calls, creates, editor.Prefix, logged.Entries)
	}

	// A viewer key reads, and is refused what needs an editor.
	vs, err := mcpConnect(t, s, viewer.Key)
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, vs, "get_agent", map[string]any{"agent_id": agentID})
	refusedCall(t, vs, "create_agent", map[string]any{"name": "Bo"}, agentline.EForbidden, "Viewers can only read")
	refusedCall(t, vs, "update_agent", map[string]any{"agent_id": agentID, "name": "Bo"}, agentline.EForbidden, "Viewers can only read")
	refusedCall(t, vs, "create_channel", map[string]any{"type": "form", "name": "Leads"}, agentline.EForbidden, "Viewers can only read")
	refusedCall(t, vs, "start_test_run", map[string]any{"agent_id": agentID}, agentline.EForbidden, "Viewers can only read")

	// Another project's key: this project's objects are not there.
	out, err := mcpConnect(t, s, stranger.Key)
	if err != nil {
		t.Fatal(err)
	}
	refusedCall(t, out, "get_agent", map[string]any{"agent_id": agentID}, agentline.ENotFound, "not found")
	refusedCall(t, out, "update_agent", map[string]any{"agent_id": agentID, "name": "Mine"}, agentline.ENotFound, "not found")
	refusedCall(t, out, "get_conversation", map[string]any{"conversation_id": convID}, agentline.ENotFound, "not found")
	refusedCall(t, out, "create_channel_key", map[string]any{"channel_id": channelID}, agentline.ENotFound, "not found")
	refusedCall(t, out, "get_test_run", map[string]any{"run_id": run["id"]}, agentline.ENotFound, "not found")
	if l := mustCall(t, out, "list_agents", nil)["items"].([]any); len(l) != 0 {
		t.Fatalf("another project's key lists %v", l)
	}
	// What the key creates is in its own project.
	if a := mustCall(t, out, "create_agent", map[string]any{"name": "Eve"}); id(a["project_id"]) != other.ID {
		t.Fatalf("created %v", a)
	}

	// Arguments the request cannot take are refused as the API refuses them.
	refusedCall(t, cs, "get_agent", nil, agentline.EInvalid, "agent_id is required")
	refusedCall(t, cs, "get_agent", map[string]any{"agent_id": agentID, "project_id": other.ID}, agentline.EInvalid, `unknown field "project_id"`)
	refusedCall(t, cs, "create_agent", map[string]any{"name": "Bo", "colour": "red"}, agentline.EInvalid, `unknown field "colour"`)

	// A revoked key is refused from its next request on; a session token
	// or no token never gets in.
	s.Must(t, 204, "DELETE", "/api/api-keys/"+itoa(editor.ID), tok, nil, nil)
	if _, err := cs.ListTools(context.Background(), nil); err == nil {
		t.Error("a revoked key's session still lists tools")
	}
	if _, err := mcpConnect(t, s, editor.Key); err == nil {
		t.Error("a revoked key connected")
	}
	for who, bearer := range map[string]string{"revoked key": editor.Key, "session token": tok, "nobody": ""} {
		req := s.Request(t, "POST", "/mcp", bearer, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
		req.Header.Set("Accept", "application/json, text/event-stream")
		r := s.Send(t, req)
		says := map[string]string{"revoked key": "API key revoked"}[who]
		if says == "" {
			says = "takes a project's API key"
		}
		if r.Status != 401 || r.ErrorCode() != agentline.EUnauthorized || !strings.Contains(string(r.Body), says) {
			t.Errorf("/mcp with %s = %s, want 401 %q", who, r, says)
		}
	}
}

// /mcp with a live key survives every bad body of the route sweep and
// malformed JSON-RPC: never a 5xx; a tool call's bad arguments are a tool
// error naming them.
func TestMCPServerSurvivesBadInput(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	key := newKey(t, s, tok, p.ID, agentline.RoleOwner).Key
	bodies := map[string][]byte{
		"unknown method":   []byte(`{"jsonrpc":"2.0","id":1,"method":"no/such"}`),
		"unknown tool":     []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_everything"}}`),
		"array arguments":  []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_agent","arguments":[1,2]}}`),
		"string arguments": []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_agent","arguments":"x"}}`),
		"object id":        []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_agent","arguments":{"agent_id":{"a":1}}}}`),
		"huge id":          []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_agent","arguments":{"agent_id":1e400}}}`),
		"no params":        []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`),
		"batch":            []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`),
	}
	for _, bb := range badBodies {
		bodies[bb.name] = bb.body
	}
	for name, body := range bodies {
		for _, accept := range []string{"", "application/json, text/event-stream"} {
			req := s.Request(t, "POST", "/mcp", key, nil)
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = int64(len(body))
			req.Header.Set("Content-Type", "application/json")
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			r := s.Send(t, req)
			if r.Status >= 500 || r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s (Accept %q) = %s", name, accept, r)
			}
			if accept != "" && strings.Contains(name, "arguments") && !strings.Contains(string(r.Body), "arguments must be a JSON object") {
				t.Errorf("%s = %s, want a tool error about the arguments", name, r)
			}
		}
	}
}
