package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// PruneWebhooks deletes the deliveries finished before the cutoff (the
// delivered and the given up) with their attempts, and the events older
// than it that nothing refers to any more (an event whose endpoint was
// deleted included); it keeps pending deliveries and their events whatever
// their age, an event still pending at another endpoint, and everything
// finished after the cutoff.
func TestPruneWebhooks(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "owner@example.com")
		p, err := db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := db.CreateProject(ctx, agentline.Project{Name: "Other"}, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		a := subscribe(t, db, p.ID)
		b := subscribe(t, db, p.ID)
		// emit sends one event of project to its endpoints and returns
		// their deliveries of it.
		emit := func(project int64, subject string, endpoints ...int64) []int64 {
			t.Helper()
			ev, err := agentline.NewEvent(project, agentline.EventLeadCreated, subject, map[string]any{"n": subject})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Emit(ctx, ev); err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, ep := range endpoints {
				list, err := db.WebhookDeliveries(ctx, project, ep, 1, 0)
				if err != nil || len(list) != 1 || list[0].Subject != subject {
					t.Fatalf("delivery of %s to %d: %v %v", subject, ep, list, err)
				}
				ids = append(ids, list[0].ID)
			}
			return ids
		}
		finish := func(delivery int64, status string, code int) {
			t.Helper()
			if err := db.RecordAttempt(ctx, delivery, agentline.WebhookAttempt{At: time.Now(), StatusCode: code}, status); err != nil {
				t.Fatal(err)
			}
		}
		// Before the cutoff: one event finished at both endpoints (one
		// delivered after a failed attempt, one given up), one delivered at
		// a but pending at b, and in another project one whose endpoint
		// was deleted.
		done := emit(p.ID, "lead:1", a.ID, b.ID)
		finish(done[0], agentline.DeliveryPending, 500)
		finish(done[0], agentline.DeliveryDelivered, 204)
		finish(done[1], agentline.DeliveryFailed, 500)
		half := emit(p.ID, "lead:2", a.ID, b.ID)
		finish(half[0], agentline.DeliveryDelivered, 200)
		gone := subscribe(t, db, p2.ID)
		emit(p2.ID, "lead:3", gone.ID)
		if err := db.DeleteWebhook(ctx, p2.ID, gone.ID); err != nil {
			t.Fatal(err)
		}
		cutoff := time.Now().UTC()
		for i := 0; i < 1_000_000 && !time.Now().UTC().Truncate(time.Microsecond).After(cutoff); i++ {
		}
		// After it: in the other project, an event delivered.
		d := subscribe(t, db, p2.ID)
		finish(emit(p2.ID, "lead:4", d.ID)[0], agentline.DeliveryDelivered, 204)

		e0, d0, a0 := db.WebhookRows(ctx, t)
		deliveries, events, err := db.PruneWebhooks(ctx, cutoff)
		if err != nil {
			t.Fatal(err)
		}
		e1, d1, a1 := db.WebhookRows(ctx, t)
		t.Logf("before: %d events, %d deliveries, %d attempts; after: %d, %d, %d", e0, d0, a0, e1, d1, a1)
		// Left: lead:2 pending at b, and lead:4 delivered after the cutoff.
		if deliveries != 3 || events != 2 || e1 != 2 || d1 != 2 || a1 != 1 {
			t.Errorf("pruned %d deliveries, %d events; left %d events, %d deliveries, %d attempts; want 3, 2; 2, 2, 1",
				deliveries, events, e1, d1, a1)
		}
		if list, _ := db.WebhookDeliveries(ctx, p2.ID, d.ID, 10, 0); len(list) != 1 || list[0].Status != agentline.DeliveryDelivered {
			t.Errorf("the delivery finished after the cutoff: %v", list)
		}
		if list, _ := db.WebhookDeliveries(ctx, p.ID, b.ID, 10, 0); len(list) != 1 || list[0].ID != half[1] || list[0].Status != agentline.DeliveryPending {
			t.Errorf("the pending delivery: %v", list)
		}
		if again, evs, err := db.PruneWebhooks(ctx, time.Now().Add(time.Hour)); err != nil || again != 1 || evs != 1 {
			t.Errorf("pruning later: %d deliveries, %d events, %v; want 1, 1", again, evs, err)
		}
	})
}
