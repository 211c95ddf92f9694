package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// TestLiveCallConditions: on SQLite, writing a call's report builds no
// temporary table (the live-call indexes' condition is comparisons, not
// an IN list, which SQLite evaluates through one on every write of a
// call: migration 00036), and the queries that count and reconcile live
// calls, which spell the condition as the indexes do, still use them.
func TestLiveCallConditions(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	ctx := context.Background()
	for _, op := range db.Explain(ctx, t, false, store.UpdateCallReport, 9) {
		if strings.Contains(op, "OpenEphemeral") {
			t.Errorf("writing a call's report opens a temporary table: %s", op)
		}
	}
	for _, c := range []struct{ q, index string }{
		{`SELECT count(*) FROM calls WHERE project_id = ? AND ` + store.CallIsLive + ` AND created_at > ?`, "calls_live_project"},
		{`SELECT id FROM calls WHERE ` + store.CallIsLive + ` AND call_sid NOT LIKE 'pending:%' ORDER BY id LIMIT ?`, "calls_live"},
	} {
		plan := strings.Join(db.Explain(ctx, t, true, c.q, strings.Count(c.q, "?")), "; ")
		if !strings.Contains(plan, "USING INDEX "+c.index+" ") {
			t.Errorf("%s\nplan %q, want it to use %s", c.q, plan, c.index)
		}
	}
}
