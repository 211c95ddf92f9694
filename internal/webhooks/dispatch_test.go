package webhooks_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/webhooks"
)

// Deliveries committed without waking the dispatcher (another instance's,
// or those of an instance that died right after its commit) get their
// jobs from its pass at start and its polling, each one job.
func TestDispatcherPollsForDeliveries(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var mu sync.Mutex
		jobs := map[int64]int{}
		db.SetOutbox(store.OutboxOptions{Enqueue: func(_ context.Context, _ *sql.Tx, js []agentline.Job) error {
			mu.Lock()
			defer mu.Unlock()
			for _, j := range js {
				jobs[j.(agentline.DeliverWebhook).DeliveryID]++
			}
			return nil
		}})
		u, err := db.CreateUser(ctx, "owner@example.com", "x")
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		secret, _ := webhooks.NewSecret()
		if _, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: p.ID, URL: "https://hooks.example.com/x", Events: []string{"*"}, Enabled: true, Secret: secret}); err != nil {
			t.Fatal(err)
		}
		for _, subject := range []string{"lead:1", "lead:2", "lead:3"} {
			ev, err := agentline.NewEvent(p.ID, agentline.EventLeadCreated, subject, map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Emit(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		d := webhooks.NewDispatcher(db, quiet, 20*time.Millisecond)
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { d.Run(runCtx); close(done) }()
		count := func() (n, most int) {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range jobs {
				most = max(most, c)
			}
			return len(jobs), most
		}
		for i := 0; i < 1000; i++ {
			if n, _ := count(); n == 3 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		d.Wake() // a pass with nothing left to dispatch
		stop()
		<-done
		if n, most := count(); n != 3 || most != 1 {
			t.Errorf("%d deliveries got jobs, at most %d each; want 3, 1", n, most)
		}
	})
}
