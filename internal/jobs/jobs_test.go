package jobs_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type pingArgs struct {
	N int `json:"n"`
}

func (pingArgs) Kind() string { return "test_ping" }

// pingWorker fails each job's first failFirst attempts, then records it.
type pingWorker struct {
	river.WorkerDefaults[pingArgs]
	failFirst int
	mu        sync.Mutex
	runs      map[int]int
	done      chan int
}

func (w *pingWorker) Work(ctx context.Context, j *river.Job[pingArgs]) error {
	w.mu.Lock()
	w.runs[j.Args.N]++
	n := w.runs[j.Args.N]
	w.mu.Unlock()
	if n <= w.failFirst {
		return errors.New("not yet")
	}
	w.done <- j.Args.N
	return nil
}

func (w *pingWorker) NextRetry(*river.Job[pingArgs]) time.Time { return time.Now() }

// newQueue migrates River's tables on db and builds a queue with r's
// workers, polling every poll, that the store's outbox inserts into.
func newQueue(t *testing.T, db *store.DB, r *jobs.Registry, poll time.Duration) *jobs.Queue {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, string(db.Dialect()), db.JobPool(), db.MigrationLock); err != nil {
		t.Fatal(err)
	}
	// Migrating twice is a no-op.
	if err := jobs.Migrate(ctx, string(db.Dialect()), db.JobPool(), db.MigrationLock); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(jobs.Options{Pool: db.JobPool(), Dialect: string(db.Dialect()), PollInterval: poll}, r)
	if err != nil {
		t.Fatal(err)
	}
	db.SetOutbox(store.OutboxOptions{Enqueue: q.EnqueueTx})
	return q
}

// A job enqueued in a committed store transaction runs once (after its
// failed attempts are retried); one enqueued in a transaction that rolls
// back never runs.
func TestEnqueueInTransaction(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		w := &pingWorker{failFirst: 2, runs: map[int]int{}, done: make(chan int, 10)}
		r := jobs.NewRegistry()
		jobs.Add(r, w, 5)
		q := newQueue(t, db, r, 50*time.Millisecond)
		enqueue := func(n int, fail bool) error {
			return db.WithOutbox(ctx, func(ctx context.Context, out agentline.Outbox) error {
				if err := out.Enqueue(ctx, pingArgs{N: n}); err != nil {
					return err
				}
				if fail {
					return errors.New("rolled back")
				}
				return nil
			})
		}
		if err := enqueue(1, true); err == nil {
			t.Fatal("want the rollback's error")
		}
		if err := enqueue(2, false); err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer q.Stop(ctx)
		select {
		case n := <-w.done:
			if n != 2 {
				t.Fatalf("ran job %d", n)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the committed job did not run")
		}
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := q.Stop(stopCtx); err != nil {
			t.Fatal(err)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.runs[1] != 0 || w.runs[2] != 3 {
			t.Errorf("runs = %v, want job 2 three times (two failures), job 1 never", w.runs)
		}
	})
}

// On SQLite, with the listener quiet between inserts (quietDriver) and a
// poll interval of an hour, jobs inserted in transactions still run: each
// through River's notification, read after the insert. (That the insert,
// not the notifier's own re-reads every 5 s, is what reads it at once is
// TestQuietListenerFollowsInserts'.)
func TestSQLiteInsertWakesTheListener(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	ctx := context.Background()
	w := &pingWorker{runs: map[int]int{}, done: make(chan int, 10)}
	r := jobs.NewRegistry()
	jobs.Add(r, w, 5)
	q := newQueue(t, db, r, time.Hour)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(ctx)
	time.Sleep(time.Second) // past the start's first fetch
	for n := 1; n <= 2; n++ {
		err := db.WithOutbox(ctx, func(ctx context.Context, out agentline.Outbox) error {
			return out.Enqueue(ctx, pingArgs{N: n})
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-w.done:
			if got != n {
				t.Fatalf("ran job %d, want %d", got, n)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("job %d did not run", n)
		}
		time.Sleep(activeForTest) // quiet again before the next
	}
}

// activeForTest outlasts the listener's active window after an insert.
const activeForTest = 2500 * time.Millisecond

// A periodic job added with AddPeriodicWhen is inserted only at the
// intervals whose question says there is work, or that fail to answer.
func TestPeriodicJobRunsWhenDue(t *testing.T) {
	db := storetest.Open(t, store.SQLite)
	ctx := context.Background()
	w := &pingWorker{runs: map[int]int{}, done: make(chan int, 100)}
	var mu sync.Mutex
	answer, asked := error(nil), 0
	due := false
	r := jobs.NewRegistry()
	jobs.AddPeriodicWhen(r, w, 100*time.Millisecond, pingArgs{N: 1}, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		return due, answer
	})
	q := newQueue(t, db, r, 50*time.Millisecond)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(ctx)
	set := func(d bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		due, answer, asked = d, err, 0
	}
	waitAsked := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			a := asked
			mu.Unlock()
			if a >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("asked %d times, want %d", a, n)
			}
		}
	}
	waitAsked(5) // River's leader asks from its start on
	time.Sleep(300 * time.Millisecond)
	select {
	case <-w.done:
		t.Fatal("a job ran with nothing due")
	default:
	}
	for _, c := range []struct {
		due bool
		err error
	}{{true, nil}, {false, errors.New("database unavailable")}} {
		set(c.due, c.err)
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("no job ran with due %v, err %v", c.due, c.err)
		}
		set(false, nil)
		waitAsked(2)
		time.Sleep(300 * time.Millisecond) // a job inserted just before runs
		for len(w.done) > 0 {
			<-w.done
		}
		waitAsked(4)
		time.Sleep(300 * time.Millisecond)
		if n := len(w.done); n != 0 {
			t.Fatalf("%d jobs ran after due went false again", n)
		}
	}
}
