package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/tools/mcptest"
)

// An MCP source saved through the API: its token works against the server,
// yet appears in no answer, no log line and nowhere in the raw database
// file; "List tools" shows the allowed tools or why there are none.
func TestMCPSourceThroughTheAPIKeepsItsToken(t *testing.T) {
	const token = "mcp-token-Zq81xYw0vK"
	path := filepath.Join(t.TempDir(), "raw.db")
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, db)
	var log bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&log, nil))
	srv := mcptest.New(t, token)
	box := testBox(t)
	f := New(db, Options{AllowPrivateWebhooks: true, Logger: logger, Sealer: box})
	t.Cleanup(func() { _ = f.Close() })
	mux := http.NewServeMux()
	for _, r := range NewHandler(db, auth.New(db, time.Hour), true).WithMCP(f, box).Routes() {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	api := httptest.NewServer(httpx.NewEdge(logger, 1<<20, prometheus.NewRegistry()).Wrap(mux))
	t.Cleanup(api.Close)
	e.srv = api

	var answers []byte
	agentPath := "/api/agents/" + strconv.FormatInt(e.agent.ID, 10) + "/tools"
	status, body := e.do(t, e.owner, "POST", agentPath, map[string]any{"type": "mcp", "name": "shop", "url": srv.URL(),
		"headers": map[string]string{"Authorization": "Bearer " + token}, "allowed_tools": []string{"lookup_order"}})
	answers = append(answers, body...)
	if status != 201 {
		t.Fatalf("create = %d %s", status, body)
	}
	var created struct {
		ID      int64             `json:"id"`
		Type    string            `json:"type"`
		Headers map[string]string `json:"headers"`
	}
	_ = json.Unmarshal(body, &created)
	if created.Type != "mcp" || created.Headers["Authorization"] != mcpMask {
		t.Fatalf("created = %s", body)
	}
	toolPath := "/api/tools/" + strconv.FormatInt(created.ID, 10)
	// A rename with the masked header sent back keeps the token.
	status, body = e.do(t, e.owner, "PATCH", toolPath, map[string]any{"name": "store", "headers": created.Headers})
	answers = append(answers, body...)
	if status != 200 {
		t.Fatalf("patch = %d %s", status, body)
	}
	status, body = e.do(t, e.viewer, "GET", toolPath+"/mcp-tools", nil)
	answers = append(answers, body...)
	var listing MCPListing
	if err := json.Unmarshal(body, &listing); status != 200 || err != nil || len(listing.Tools) != 1 ||
		listing.Tools[0].ModelName != "store__lookup_order" || listing.Error != nil {
		t.Fatalf("list tools = %d %s", status, body)
	}
	res, err := f.Execute(ctx, e.agent, agentline.ToolCall{Name: "store__lookup_order", Arguments: json.RawMessage(`{"order_id":"9"}`)})
	if err != nil || res.Output != "order 9: shipped" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	for _, p := range []string{toolPath, agentPath} {
		_, body = e.do(t, e.owner, "GET", p, nil)
		answers = append(answers, body...)
	}
	// A wrong token: "List tools" says why, in words without the token.
	status, body = e.do(t, e.owner, "PATCH", toolPath, map[string]any{"headers": map[string]string{"Authorization": "Bearer wrong-" + token}})
	answers = append(answers, body...)
	if status != 200 {
		t.Fatalf("patch = %d %s", status, body)
	}
	_, body = e.do(t, e.owner, "GET", toolPath+"/mcp-tools", nil)
	answers = append(answers, body...)
	if err := json.Unmarshal(body, &listing); err != nil || listing.Error == nil || len(listing.Tools) != 0 {
		t.Fatalf("list tools with a wrong token = %s", body)
	}
	if _, err := f.Definitions(ctx, e.agent); err != nil {
		t.Fatal(err)
	}

	db.Close()
	raw := readAll(t, path)
	for what, b := range map[string][]byte{"answers": answers, "log": log.Bytes(), "database file": raw} {
		if bytes.Contains(b, []byte(token)) {
			t.Errorf("the MCP token is in the %s", what)
		}
	}
	if !strings.Contains(log.String(), "mcp server offers no tools") {
		t.Errorf("log lacks the failed listing:\n%s", log.String())
	}
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	var all []byte
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(p)
		if err == nil {
			all = append(all, b...)
		}
	}
	if len(all) == 0 {
		t.Fatal("no database file")
	}
	return all
}
