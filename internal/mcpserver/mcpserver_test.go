package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/mcpserver"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// auditFake is the audit log: it keeps what it is given, or fails.
type auditFake struct {
	mu      sync.Mutex
	entries []agentline.AuditEntry
	fail    bool
}

func (a *auditFake) AppendAudit(ctx context.Context, e agentline.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail {
		return errors.New("audit log unreachable")
	}
	a.entries = append(a.entries, e)
	return nil
}

// apiCall is one request a tool made to the API.
type apiCall struct{ method, target, auth, body string }

// apiFake stands for the management API: it keeps each request and
// answers a list of agents (with a next page), a created agent, or the
// refusal a viewer gets.
type apiFake struct {
	mu    sync.Mutex
	calls []apiCall
}

func (f *apiFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), string(b)})
	f.mu.Unlock()
	switch r.Method {
	case "GET":
		w.Header().Set("X-Next-Cursor", "page-2")
		httpx.WriteJSON(w, 200, []map[string]any{{"id": 7, "name": "Ada"}})
	case "POST":
		httpx.WriteJSON(w, 201, map[string]any{"id": 8, "name": "Bo"})
	default:
		httpx.WriteError(w, r, agentline.Errorf(agentline.EForbidden, "Viewers can only read"))
	}
}

// keyTransport sends the key and a request id with every request.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	r.Header.Set("X-Request-Id", "req-42")
	return http.DefaultTransport.RoundTrip(r)
}

// Every tool call, answered, refused by the API or by its arguments, is
// written to the audit log first, with the key as actor (its id and
// prefix), the key's project, the client's address and the request id;
// listing tools is no call. A call that cannot be recorded is not made.
// The tool's request carries the caller's key, its path the key's
// project, and its answer comes back as the tool's result.
func TestEveryToolCallIsAudited(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, store.SQLite)
	svc := auth.New(db, time.Hour)
	u, err := svc.CreateUser(ctx, "owner@example.com", "a long enough password")
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreateProject(ctx, agentline.Project{Name: "Shop"}, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	token, err := auth.NewToken(agentline.APIKeyPrefix)
	if err != nil {
		t.Fatal(err)
	}
	k, err := db.CreateAPIKey(ctx, agentline.APIKey{ProjectID: p.ID, Name: "ci", Role: agentline.RoleEditor,
		Prefix: token[:11], CreatedBy: u.ID}, auth.HashToken(token))
	if err != nil {
		t.Fatal(err)
	}
	audit, api := &auditFake{}, &apiFake{}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	srv, err := mcpserver.New(mcpserver.Options{Auth: svc, API: api, OpenAPI: agentline.OpenAPI(), Audit: audit,
		Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, r := range srv.Routes() {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	hs := httptest.NewServer(httpx.NewEdge(slog.New(slog.DiscardHandler), 1<<20, prometheus.NewRegistry()).Wrap(mux))
	defer hs.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + mcpserver.Path,
		HTTPClient: &http.Client{Transport: keyTransport{token}}, MaxRetries: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		tool    string
		args    map[string]any
		isError bool
		says    string
	}{
		{"list_agents", map[string]any{"limit": 5, "cursor": "a b"}, false, `{"items":[{"id":7,"name":"Ada"}],"next_cursor":"page-2"}`},
		{"create_agent", map[string]any{"name": "Bo"}, false, `"name":"Bo"`},
		{"update_agent", map[string]any{"agent_id": 7, "greeting": "Hi"}, true, "Viewers can only read"},
		{"get_agent", map[string]any{}, true, "agent_id is required"},
		{"get_conversation", map[string]any{"conversation_id": "ses a%b"}, false, "Ada"},
		{"get_conversation", map[string]any{"conversation_id": "ses_a/../b"}, true, "is no id"},
	}
	for _, call := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
		if err != nil {
			t.Fatalf("%s: %v", call.tool, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError != call.isError || !strings.Contains(text, call.says) {
			t.Errorf("%s = error %v, %s; want error %v with %q", call.tool, res.IsError, text, call.isError, call.says)
		}
	}
	pid := itoa(p.ID)
	want := []apiCall{
		{"GET", "/api/projects/" + pid + "/agents?cursor=a+b&limit=5", "Bearer " + token, ""},
		{"POST", "/api/projects/" + pid + "/agents", "Bearer " + token, `{"name":"Bo"}`},
		{"PATCH", "/api/agents/7", "Bearer " + token, `{"greeting":"Hi"}`},
		{"GET", "/api/conversations/ses%20a%25b", "Bearer " + token, ""},
	}
	if len(api.calls) != len(want) {
		t.Fatalf("API requests %+v, want %+v", api.calls, want)
	}
	for i := range want {
		if api.calls[i] != want[i] {
			t.Errorf("API request %d = %+v, want %+v", i, api.calls[i], want[i])
		}
	}
	if len(audit.entries) != len(calls) {
		t.Fatalf("%d audit entries for %d calls: %+v", len(audit.entries), len(calls), audit.entries)
	}
	for i, e := range audit.entries {
		w := agentline.AuditEntry{At: at, Actor: agentline.Actor{Kind: agentline.ActorAPIKey, ID: k.ID, KeyPrefix: k.Prefix},
			Action: "mcp.call", Resource: agentline.AuditResource{Kind: "mcp_tool", ID: calls[i].tool},
			ProjectID: p.ID, ClientIP: "127.0.0.1", RequestID: "req-42"}
		if gb, wb := mustJSON(t, e), mustJSON(t, w); gb != wb {
			t.Errorf("audit entry %d = %s, want %s", i, gb, wb)
		}
	}

	audit.fail = true
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_agent", Arguments: map[string]any{"name": "Cy"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "not made") || len(api.calls) != len(want) {
		t.Errorf("with the audit log down: error %v, %s, %d API requests", res.IsError, text, len(api.calls))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
