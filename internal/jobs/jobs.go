// Package jobs is agentline's durable job queue: River
// (github.com/riverqueue/river) on the store's database, SQLite or
// PostgreSQL. Jobs are inserted in the transaction of the store write that
// causes them (EnqueueTx, which the store calls through its outbox), so a
// crash never loses one nor leaves one behind for a write that was rolled
// back; River runs each job once across every instance on one database,
// and retries a failed one on the worker's schedule.
//
// On SQLite, River works on the store's single write connection (see
// store.JobPool): its writes and the store's queue behind each other in
// the process instead of failing with "database is locked".
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
)

// Registry collects the workers of every job kind before the queue is
// built, with the insert options of each kind.
type Registry struct {
	workers  *river.Workers
	opts     map[string]river.InsertOpts
	periodic []*river.PeriodicJob
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{workers: river.NewWorkers(), opts: map[string]river.InsertOpts{}}
}

// Add registers w as the worker of T's kind, whose jobs get maxAttempts
// runs at most.
func Add[T river.JobArgs](r *Registry, w river.Worker[T], maxAttempts int) {
	var zero T
	river.AddWorker(r.workers, w)
	r.opts[zero.Kind()] = river.InsertOpts{MaxAttempts: maxAttempts}
}

// AddPeriodic registers w as the worker of T's kind and runs a job of it
// every interval (and once at start). River's leader inserts periodic jobs,
// so they run once per deployment, whatever the number of instances.
func AddPeriodic[T river.JobArgs](r *Registry, w river.Worker[T], every time.Duration, args T) {
	Add(r, w, 1)
	r.addPeriodic(every, args, r.opts[args.Kind()], nil)
}

// AddPeriodicWhen is AddPeriodic for a job that often has nothing to do:
// at each interval, due is asked first and the job inserted only when it
// says so (or fails to answer, so that the job's run reports the failure).
// An insert, a fetch and a completion cost far more than a look at an
// index, and an idle deployment should cost next to nothing.
func AddPeriodicWhen[T river.JobArgs](r *Registry, w river.Worker[T], every time.Duration, args T,
	due func(context.Context) (bool, error)) {
	Add(r, w, 1)
	r.addPeriodic(every, args, r.opts[args.Kind()], due)
}

// dueTimeout bounds AddPeriodicWhen's question: River's constructor must
// not block.
const dueTimeout = time.Second

// addPeriodic inserts args with opts every interval and once at start,
// each time due (when not nil) does not say there is nothing to do.
func (r *Registry) addPeriodic(every time.Duration, args river.JobArgs, opts river.InsertOpts,
	due func(context.Context) (bool, error)) {
	r.periodic = append(r.periodic, river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) {
			if due != nil {
				ctx, cancel := context.WithTimeout(context.Background(), dueTimeout)
				defer cancel()
				if ok, err := due(ctx); err == nil && !ok {
					return nil, nil
				}
			}
			return args, &opts
		}, &river.PeriodicJobOpts{RunOnStart: true}))
}

// Options configures a Queue.
type Options struct {
	// Pool is the database the jobs live in: the store's JobPool.
	Pool *sql.DB
	// Dialect is "sqlite" or "postgres".
	Dialect string
	// Workers is how many jobs run at once in this instance (default 20).
	Workers int
	// PollInterval is how often the queue looks for jobs that became due
	// (default 1 s); new jobs on SQLite are seen sooner, through River's
	// notifications.
	PollInterval time.Duration
	// RescueAfter is how long a job may stay running before it counts as
	// stuck (its instance died mid-run) and runs again (default 5 min). A
	// job's own timeout is at most this long.
	RescueAfter time.Duration
	Logger      *slog.Logger
	Registerer  prometheus.Registerer
	// Tracing, when set (tracing is on), gives each job run a span
	// (tracing.go); nil adds nothing to a job's run.
	Tracing trace.TracerProvider
}

// Queue is the job queue of one instance.
type Queue struct {
	client  *river.Client[*sql.Tx]
	opts    map[string]river.InsertOpts
	logger  *slog.Logger
	metrics *metrics
	mu      sync.Mutex
	started bool
	watch   sync.WaitGroup
	unsub   func()
	// listener, on SQLite, is told of each insert (quietDriver).
	listener *quietListener
}

func driver(dialect string, pool *sql.DB) (riverdriver.Driver[*sql.Tx], error) {
	switch dialect {
	case "sqlite":
		return riversqlite.New(pool), nil
	case "postgres":
		return riverdatabasesql.New(pool), nil
	}
	return nil, fmt.Errorf("jobs: unknown dialect %q", dialect)
}

// Migrate brings River's own tables on pool up to date, under lock (the
// store's MigrationLock, so instances starting together take turns).
func Migrate(ctx context.Context, dialect string, pool *sql.DB, lock func(ctx context.Context, fn func(context.Context) error) error) error {
	d, err := driver(dialect, pool)
	if err != nil {
		return err
	}
	m, err := rivermigrate.New(d, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	return lock(ctx, func(ctx context.Context) error {
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("migrate job queue: %w", err)
		}
		return nil
	})
}

// New builds the queue with the registry's workers; it runs none until
// Start, but EnqueueTx works at once.
func New(o Options, r *Registry) (*Queue, error) {
	if o.Workers <= 0 {
		o.Workers = 20
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.RescueAfter <= 0 {
		o.RescueAfter = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	d, err := driver(o.Dialect, o.Pool)
	if err != nil {
		return nil, err
	}
	var listener *quietListener
	if o.Dialect == "sqlite" {
		qd := newQuietDriver(d, o.PollInterval)
		d, listener = qd, qd.listener
	}
	var mw []rivertype.Middleware
	if o.Tracing != nil {
		mw = append(mw, tracingMiddleware(o.Tracing))
	}
	client, err := river.NewClient(d, &river.Config{
		Middleware:        mw,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.Workers}},
		Workers:           r.workers,
		PeriodicJobs:      r.periodic,
		FetchPollInterval: o.PollInterval,
		FetchCooldown:     min(o.PollInterval, 100*time.Millisecond),
		PollOnly:          o.Dialect == "postgres", // database/sql has no LISTEN
		// River logs its own trouble at warn and above.
		Logger:      slog.New(levelAtLeast{o.Logger.Handler(), slog.LevelWarn}),
		MaxAttempts: 25,
		JobTimeout:  min(time.Minute, o.RescueAfter),
		// A job whose instance died mid-run (kill -9) runs again after this.
		RescueStuckJobsAfter: o.RescueAfter,
	})
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	q := &Queue{client: client, opts: r.opts, logger: o.Logger, metrics: newMetrics(o.Registerer), listener: listener}
	return q, nil
}

// EnqueueTx inserts jobs in tx: the store's Enqueuer.
func (q *Queue) EnqueueTx(ctx context.Context, tx *sql.Tx, jobs []agentline.Job) error {
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		a, opts, err := q.insertArgs(j)
		if err != nil {
			return err
		}
		params[i] = river.InsertManyParams{Args: a, InsertOpts: &opts}
	}
	if _, err := q.client.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("insert %d jobs: %w", len(jobs), err)
	}
	q.inserted()
	for _, j := range jobs {
		q.metrics.enqueued.WithLabelValues(j.Kind()).Inc()
	}
	return nil
}

// Enqueue inserts one job on its own, for work no store write causes (the
// reconciliation an instance asks for when it starts).
func (q *Queue) Enqueue(ctx context.Context, j agentline.Job) error {
	a, opts, err := q.insertArgs(j)
	if err != nil {
		return err
	}
	if _, err := q.client.Insert(ctx, a, &opts); err != nil {
		return fmt.Errorf("insert a %s job: %w", a.Kind(), err)
	}
	q.inserted()
	q.metrics.enqueued.WithLabelValues(a.Kind()).Inc()
	return nil
}

// inserted tells the SQLite listener of an insert: its notification is
// read at River's pace, not the quiet one.
func (q *Queue) inserted() {
	if q.listener != nil {
		q.listener.inserted()
	}
}

// insertArgs returns a job as River inserts it, with the options its kind
// was registered with: a kind with no worker here is refused rather than
// left in the queue for nobody.
func (q *Queue) insertArgs(j agentline.Job) (river.JobArgs, river.InsertOpts, error) {
	a, ok := j.(river.JobArgs)
	if !ok {
		return nil, river.InsertOpts{}, fmt.Errorf("job %T is not a job's arguments", j)
	}
	opts, ok := q.opts[a.Kind()]
	if !ok {
		return nil, river.InsertOpts{}, fmt.Errorf("no worker for job kind %q", a.Kind())
	}
	return a, opts, nil
}

// Start runs the workers until Stop.
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("job queue already started")
	}
	events, unsub := q.client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled, river.EventKindJobSnoozed)
	q.unsub = unsub
	q.watch.Go(func() { q.observe(events) })
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		unsub()
		return fmt.Errorf("start job queue: %w", err)
	}
	q.started = true
	return nil
}

// Stop lets the jobs running finish until ctx ends, then cancels them
// (they are retried later, here or by another instance), and returns when
// every worker has stopped.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started {
		return nil
	}
	q.started = false
	err := q.client.Stop(ctx)
	if err != nil {
		q.logger.Warn("jobs: stop timed out: cancelling the jobs still running", "err", err)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = q.client.StopAndCancel(cctx)
		cancel()
	}
	q.unsub()
	q.watch.Wait()
	return err
}
