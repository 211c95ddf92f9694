package webhooks

import (
	"context"
	"log/slog"
	"time"
)

// DispatchStore gives deliveries without a job their jobs.
type DispatchStore interface {
	DispatchDeliveries(ctx context.Context, limit int) (int, error)
}

// dispatchBatch is how many deliveries one dispatch transaction queues.
const dispatchBatch = 500

// Dispatcher gives webhook deliveries their jobs. A request that emits an
// event writes the event and its deliveries only (two small statements in
// its own transaction); the job queue's insert, which costs more than both
// (on SQLite mostly in parsing River's statement), is made here, for many
// deliveries at once, right after the request's transaction commits (Wake)
// and every PollInterval (deliveries left by an instance that died between
// its commit and the dispatch, or committed by another instance).
type Dispatcher struct {
	store  DispatchStore
	logger *slog.Logger
	every  time.Duration
	wake   chan struct{}
}

// NewDispatcher returns a dispatcher polling every interval (default 1 s).
func NewDispatcher(store DispatchStore, logger *slog.Logger, every time.Duration) *Dispatcher {
	if every <= 0 {
		every = time.Second
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Dispatcher{store: store, logger: logger, every: every, wake: make(chan struct{}, 1)}
}

// Wake makes the dispatcher look for deliveries now; it never blocks, and
// wakes while it works coalesce into one more pass.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// gather is how long the dispatcher waits after a wake before it
// dispatches: the deliveries committed meanwhile share its transaction and
// its one insert of jobs, instead of each paying for their own while
// requests wait for the (on SQLite, single) write connection. It is what a
// delivery's first attempt waits at most, besides the queue's own pickup.
const gather = 20 * time.Millisecond

// Run dispatches until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		d.Drain(ctx)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
			select {
			case <-ctx.Done():
				return
			case <-time.After(gather):
			}
		case <-t.C:
		}
	}
}

// Drain dispatches every delivery waiting for its job (up to 100 batches,
// then the next pass goes on) and returns how many.
func (d *Dispatcher) Drain(ctx context.Context) int {
	total := 0
	for range 100 {
		n, err := d.store.DispatchDeliveries(ctx, dispatchBatch)
		total += n
		if err != nil {
			if ctx.Err() == nil {
				d.logger.Error("webhook dispatch failed: retrying on the next pass", "err", err)
			}
			return total
		}
		if n < dispatchBatch {
			return total
		}
	}
	return total
}
