package audit_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/audit"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// The prune deletes the entries older than the retention, counted in days
// back from now, and nothing else: not an entry a second younger.
func TestPrunerKeepsTheRetention(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			db := storetest.Open(t, d)
			ctx := context.Background()
			now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
			ages := []time.Duration{31 * 24 * time.Hour, 30*24*time.Hour + time.Second, 30*24*time.Hour - time.Second, time.Hour}
			for i, age := range ages {
				if err := db.AppendAudit(ctx, agentline.AuditEntry{At: now.Add(-age), Action: "auth.sign_in_failed",
					Resource: agentline.AuditResource{Kind: "user", ID: strconv.Itoa(i)}}); err != nil {
					t.Fatal(err)
				}
			}
			p := &audit.Pruner{Store: db, RetentionDays: 30, Now: func() time.Time { return now }}
			if n, err := p.Prune(ctx); err != nil || n != 2 {
				t.Fatalf("Prune = %d, %v; want the 2 entries older than 30 days", n, err)
			}
			left, err := db.AuditLog(ctx, agentline.AuditFilter{})
			if err != nil || len(left) != 2 || left[0].Resource.ID != "3" || left[1].Resource.ID != "2" {
				t.Fatalf("left %+v, %v", left, err)
			}
			if n, _ := p.Prune(ctx); n != 0 {
				t.Errorf("a second prune deleted %d", n)
			}
		})
	}
}

var _ audit.PruneStore = (*store.DB)(nil)

// Filter reads every filter and refuses what it cannot mean, naming the
// parameter.
func TestFilter(t *testing.T) {
	q := url.Values{"actor_kind": {"api_key"}, "actor_id": {"7"}, "actor": {"agl_sk_ab12"}, "action": {"agent.update"},
		"resource_kind": {"agent"}, "resource_id": {"3"}, "from": {"2026-01-01"}, "to": {"2026-02-01T00:00:00Z"}}
	f, err := audit.Filter(q, 5)
	want := agentline.AuditFilter{ProjectID: 5, ActorKind: agentline.ActorAPIKey, ActorID: 7, ActorLabel: "agl_sk_ab12", Action: "agent.update",
		ResourceKind: "agent", ResourceID: "3", From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	if err != nil || f != want {
		t.Fatalf("Filter = %+v, %v", f, err)
	}
	for field, q := range map[string]url.Values{
		"actor_kind": {"actor_kind": {"robot"}},
		"actor_id":   {"actor_id": {"-1"}},
		"from":       {"from": {"last week"}},
		"to":         {"from": {"2026-02-01"}, "to": {"2026-01-01"}},
		"action":     {"action": {string(make([]byte, 321))}},
	} {
		_, err := audit.Filter(q, 0)
		var e *agentline.Error
		if !errors.As(err, &e) || e.Code != agentline.EInvalid || e.Field != field {
			t.Errorf("%v: %v, want invalid naming %s", q, err, field)
		}
	}
}
