package store_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// An emitted event's deliveries get no job in the emitting transaction;
// the dispatcher is woken once that commits (not for a rollback), and
// DispatchDeliveries gives each delivery one job, oldest first, in batches
// of its limit.
func TestDispatchDeliveries(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "owner@example.com")
		p, err := db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		subscribe(t, db, p.ID)
		subscribe(t, db, p.ID)
		var jobs []int64
		wakes := 0
		db.SetOutbox(store.OutboxOptions{Wake: func() { wakes++ }, Enqueue: func(_ context.Context, _ *sql.Tx, js []agentline.Job) error {
			for _, j := range js {
				jobs = append(jobs, j.(agentline.DeliverWebhook).DeliveryID)
			}
			return nil
		}})
		emit := func(subject string, fail bool) {
			ev, err := agentline.NewEvent(p.ID, agentline.EventLeadCreated, subject, map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			err = db.WithOutbox(ctx, func(ctx context.Context, out agentline.Outbox) error {
				if err := out.Emit(ctx, ev); err != nil {
					return err
				}
				if fail {
					return sql.ErrTxDone // any error rolls back
				}
				return nil
			})
			if (err != nil) != fail {
				t.Fatal(err)
			}
		}
		emit("lead:1", false)
		emit("lead:2", true)
		emit("lead:3", false)
		if len(jobs) != 0 || wakes != 2 {
			t.Fatalf("after emitting: %d jobs, %d wakes; want 0, 2", len(jobs), wakes)
		}
		for _, want := range []int{3, 1, 0} {
			n, err := db.DispatchDeliveries(ctx, 3)
			if err != nil || n != want {
				t.Fatalf("dispatched %d (%v), want %d", n, err, want)
			}
		}
		if !slices.IsSorted(jobs) || len(slices.Compact(slices.Clone(jobs))) != 4 {
			t.Errorf("jobs for deliveries %v, want 4 distinct, oldest first", jobs)
		}
	})
}
