package webhooks_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/webhooks"
)

// recorder is a DeliverWebhook worker that counts the runs of each
// delivery's job.
type recorder struct {
	river.WorkerDefaults[agentline.DeliverWebhook]
	mu   sync.Mutex
	runs map[int64]int
}

func (r *recorder) Work(_ context.Context, j *river.Job[agentline.DeliverWebhook]) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[j.Args.DeliveryID]++
	return nil
}

// counts returns how many deliveries ran and the most runs of one.
func (r *recorder) counts() (n, most int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.runs {
		most = max(most, c)
	}
	return len(r.runs), most
}

// Deliveries stored without a dispatch job (as an older agentline stored
// them, for its polling dispatcher) get their jobs from the dispatch the
// queue runs at start. Then events emitted from several goroutines while
// the queue runs, each transaction's dispatch job coalescing with the one
// waiting or running, all get their jobs without waiting for the next
// periodic dispatch (an hour here): each delivery one job.
func TestDispatchJob(t *testing.T) {
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
		secret, _ := webhooks.NewSecret()
		if _, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: p.ID, URL: "https://hooks.example.com/x", Events: []string{"*"}, Enabled: true, Secret: secret}); err != nil {
			t.Fatal(err)
		}
		emit := func(subject string) {
			ev, err := agentline.NewEvent(p.ID, agentline.EventLeadCreated, subject, map[string]any{})
			if err == nil {
				err = db.Emit(ctx, ev)
			}
			if err != nil {
				t.Error(err)
			}
		}
		for _, subject := range []string{"lead:1", "lead:2", "lead:3"} {
			emit(subject) // no job queue: the dispatch job is dropped
		}
		rec := &recorder{runs: map[int64]int{}}
		q := dispatchQueue(t, db, rec)
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer q.Stop(ctx)
		waitRuns(t, rec, 3)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 50 {
					emit(fmt.Sprintf("lead:%d:%d", g, i))
				}
			})
		}
		wg.Wait()
		waitRuns(t, rec, 203)
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := q.Stop(stopCtx); err != nil {
			t.Fatal(err)
		}
		if n, most := rec.counts(); n != 203 || most != 1 {
			t.Errorf("%d deliveries got jobs, at most %d runs each; want 203, 1", n, most)
		}
	})
}

// dispatchQueue builds a job queue on db with the dispatch job (every
// hour, and at start) and rec as the delivery worker, and connects the
// store's outbox to it.
func dispatchQueue(t *testing.T, db *store.DB, rec *recorder) *jobs.Queue {
	t.Helper()
	if err := jobs.Migrate(context.Background(), string(db.Dialect()), db.JobPool(), db.MigrationLock); err != nil {
		t.Fatal(err)
	}
	r := jobs.NewRegistry()
	jobs.Add(r, rec, 1)
	jobs.AddCoalescing(r, &webhooks.Dispatcher{Store: db, Logger: quiet}, 10, time.Hour, agentline.DispatchWebhooks{})
	q, err := jobs.New(jobs.Options{Pool: db.JobPool(), Dialect: string(db.Dialect()), PollInterval: 50 * time.Millisecond, Logger: quiet}, r)
	if err != nil {
		t.Fatal(err)
	}
	db.SetOutbox(store.OutboxOptions{Enqueue: q.EnqueueTx})
	return q
}

// waitRuns waits up to 30 s for n deliveries' jobs to have run.
func waitRuns(t *testing.T, rec *recorder, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got, _ := rec.counts(); got >= n {
			return
		}
	}
	got, _ := rec.counts()
	t.Fatalf("%d of %d deliveries got their jobs", got, n)
}
