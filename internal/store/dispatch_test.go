package store_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// An emitted event's deliveries get no job in the emitting transaction,
// which inserts one DispatchWebhooks job however many deliveries it
// stores, or none while deliveries stored before still wait for theirs
// (their dispatch comes after it commits). DispatchDeliveries gives each
// delivery one job, oldest first, in batches of its limit; its finish runs
// first in its transaction (an error rolls the batch back), and a full
// batch with finish inserts the dispatch job that goes on.
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
		dispatches := 0
		db.SetOutbox(store.OutboxOptions{Enqueue: func(_ context.Context, _ *sql.Tx, js []agentline.Job) error {
			for _, j := range js {
				switch j := j.(type) {
				case agentline.DeliverWebhook:
					jobs = append(jobs, j.DeliveryID)
				case agentline.DispatchWebhooks:
					dispatches++
				default:
					t.Errorf("enqueued %#v", j)
				}
			}
			return nil
		}})
		emit := func(fail bool, subjects ...string) {
			err = db.WithOutbox(ctx, func(ctx context.Context, out agentline.Outbox) error {
				for _, subject := range subjects {
					ev, err := agentline.NewEvent(p.ID, agentline.EventLeadCreated, subject, map[string]any{})
					if err != nil {
						t.Fatal(err)
					}
					if err := out.Emit(ctx, ev); err != nil {
						return err
					}
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
		emit(false, "lead:1", "lead:2")
		emit(true, "lead:3") // rolled back before its insert, which comes last
		emit(false, "lead:4")
		// lead:4's transaction finds lead:1's dispatch still to run.
		if len(jobs) != 0 || dispatches != 1 {
			t.Fatalf("after emitting: %d delivery jobs, %d dispatch jobs; want 0, 1", len(jobs), dispatches)
		}
		dispatch := func(limit, want, wantDispatches int, finish func(context.Context, *sql.Tx) error) {
			t.Helper()
			n, err := db.DispatchDeliveries(ctx, limit, finish)
			if err != nil || n != want || dispatches != wantDispatches {
				t.Fatalf("dispatched %d (%v), %d dispatch jobs; want %d, %d", n, err, dispatches, want, wantDispatches)
			}
		}
		finished := 0
		finish := func(_ context.Context, tx *sql.Tx) error {
			if len(jobs) != 0 && finished == 0 {
				t.Error("finish ran after the batch")
			}
			finished++
			return nil
		}
		boom := errors.New("boom")
		if _, err := db.DispatchDeliveries(ctx, 2, func(context.Context, *sql.Tx) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("a failed finish: %v", err)
		}
		dispatch(2, 2, 2, finish) // a full batch: one more dispatch job
		dispatch(3, 3, 2, nil)
		dispatch(3, 1, 2, finish)
		dispatch(3, 0, 2, nil)
		if finished != 2 {
			t.Errorf("finish ran %d times, want 2", finished)
		}
		if !slices.IsSorted(jobs) || len(slices.Compact(slices.Clone(jobs))) != 6 {
			t.Errorf("jobs for deliveries %v, want 6 distinct, oldest first", jobs)
		}
		emit(false, "lead:5") // none waits now: it inserts one
		if dispatches != 3 {
			t.Errorf("%d dispatch jobs after an emit with none waiting, want 3", dispatches)
		}
	})
}
