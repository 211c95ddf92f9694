package app_test

import (
	"context"
	"database/sql"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// A public (widget) answer to something that failed on the network, a tool
// webhook nobody listens on or a provider that went away, carries the error
// code and a generic sentence: never the network error's text, which names
// addresses, ports and resolvers (it goes to the log).
func TestPublicAnswersNameNoNetworkError(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := closed.Addr().String()
	closed.Close()
	w := startWidgetSite(t, store.SQLite, nil)
	providerSrv, a := w.providerSrv, w.agent
	w.s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", w.token, map[string]any{"name": "lookup_order", "description": "Find an order",
		"parameters": map[string]any{"type": "object"}, "url": "http://" + deadAddr + "/hook"}, nil)
	widget := func(path string, body any) *apptest.Response { return w.do(t, "POST", path, body) }
	_, deadPort, _ := net.SplitHostPort(deadAddr)
	_, providerPort, _ := net.SplitHostPort(strings.TrimPrefix(providerSrv.URL, "http://"))
	leaks := func(what string, r *apptest.Response) {
		t.Helper()
		for _, leak := range []string{"127.0.0.1", deadPort, providerPort, "dial", "tcp", "refused", "connect:", "lookup", "EOF"} {
			if strings.Contains(string(r.Body), leak) {
				t.Errorf("%s answer carries %q: %s", what, leak, r.Body)
			}
		}
	}

	r := widget("/widget/v1/session", map[string]any{"agent_id": a.ID})
	var sess struct {
		SessionID string `json:"session_id"`
	}
	r.JSON(t, &sess)
	if r.Status != 201 || sess.SessionID == "" {
		t.Fatalf("session: %s", r)
	}
	r = widget("/widget/v1/tools/execute", map[string]any{"session_id": sess.SessionID, "call_id": "call_1", "name": "lookup_order", "arguments": `{}`})
	if r.Status != 200 || !strings.Contains(string(r.Body), "unreachable") {
		t.Fatalf("tools/execute with a dead webhook: %s", r)
	}
	leaks("tools/execute", r)

	providerSrv.Close() // the provider goes away
	r = widget("/widget/v1/session", map[string]any{"agent_id": a.ID})
	if r.ErrorCode() != agentline.EProvider {
		t.Fatalf("session with the provider gone: %s", r)
	}
	leaks("session", r)
}

// The toucher records a widget key's last use off the request path. Its
// write belongs to the app: shutdown waits for it, cutting it short at the
// shutdown timeout, so it never runs against a closed store and no toucher
// goroutine outlives Close. Another connection holds the key's row lock, so
// the write a widget request starts is still waiting when the app shuts
// down. PostgreSQL, because its locks are per row: SQLite's one write lock
// would hold up the job queue's shutdown as well.
func TestKeyToucherEndsWithShutdown(t *testing.T) {
	w := startWidgetSite(t, store.Postgres, map[string]string{"AGENTLINE_SHUTDOWN_TIMEOUT": "1s"})
	db, err := sql.Open("pgx", w.s.App.Config.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT id FROM widget_keys FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	if r := w.do(t, "GET", "/widget/v1/config", nil); r.Status != 200 {
		t.Fatalf("config: %s", r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for toucherGoroutines() == "" {
		if time.Now().After(deadline) {
			t.Fatal("no toucher goroutine after a widget request with a fresh key")
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.s.Stop(t)
	if g := toucherGoroutines(); g != "" {
		t.Fatalf("a toucher goroutine outlived shutdown:\n%s", g)
	}
}

// toucherGoroutines returns the stacks of the goroutines running the
// widget key toucher's code, or "".
func toucherGoroutines() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "internal/widget.(*toucher)") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
