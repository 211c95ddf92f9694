package webhooks_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/webhooks"
)

// The pruner deletes a delivered delivery and its event once the retention
// period has passed since it finished, not before; a pending one stays.
func TestPrunerKeepsTheRetentionPeriod(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		db.SetOutbox(store.OutboxOptions{Enqueue: func(context.Context, *sql.Tx, []agentline.Job) error { return nil }})
		u, err := db.CreateUser(ctx, "owner@example.com", "x")
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		secret, err := webhooks.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		ep, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: p.ID, URL: "https://hooks.example.com/x", Events: []string{"*"}, Enabled: true, Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		for _, subject := range []string{"lead:1", "lead:2"} {
			ev, err := agentline.NewEvent(p.ID, agentline.EventLeadCreated, subject, map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Emit(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		list, err := db.WebhookDeliveries(ctx, p.ID, ep.ID, 10, 0)
		if err != nil || len(list) != 2 {
			t.Fatal(list, err)
		}
		delivered, pending := list[1], list[0] // newest first
		if err := db.RecordAttempt(ctx, delivered.ID, agentline.WebhookAttempt{At: time.Now(), StatusCode: 204}, agentline.DeliveryDelivered); err != nil {
			t.Fatal(err)
		}
		ids := func() []int64 {
			t.Helper()
			list, err := db.WebhookDeliveries(ctx, p.ID, ep.ID, 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, d := range list {
				ids = append(ids, d.ID)
			}
			return ids
		}
		at := time.Now()
		pr := &webhooks.Pruner{Store: db, Retention: 24 * time.Hour, Now: func() time.Time { return at }}
		for _, c := range []struct {
			after time.Duration
			left  int
		}{{23 * time.Hour, 2}, {25 * time.Hour, 1}, {1000 * time.Hour, 1}} {
			at = time.Now().Add(c.after)
			if err := pr.Prune(ctx); err != nil {
				t.Fatal(err)
			}
			if got := ids(); len(got) != c.left || got[0] != pending.ID {
				t.Errorf("%s later: deliveries %v, want %d with %d", c.after, got, c.left, pending.ID)
			}
		}
		if _, err := db.WebhookDelivery(ctx, p.ID, ep.ID, delivered.ID); err == nil {
			t.Error("the pruned delivery is still found")
		}
	})
}
