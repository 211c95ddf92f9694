package webhooks

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/jobs"
)

// DispatchStore gives deliveries without a job their jobs.
type DispatchStore interface {
	DispatchDeliveries(ctx context.Context, limit int, finish func(ctx context.Context, tx *sql.Tx) error) (int, error)
}

// dispatchBatch is how many deliveries one dispatch transaction queues.
const dispatchBatch = 500

// DispatchInterval is how often a dispatch runs though no transaction
// asked for one. Every transaction that stores deliveries inserts its
// dispatch, so this only finds deliveries stored by an older agentline
// (whose dispatcher polled, and may have stopped before it got to them),
// those of a dispatch whose every attempt failed, and those whose
// dispatch coalesced with one left running by an instance that died
// (which the job queue rescues only after AGENTLINE_JOB_RESCUE_AFTER).
const DispatchInterval = 30 * time.Second

// Dispatcher is the worker of the DispatchWebhooks job. A request that
// emits an event writes the event and its deliveries (two small
// statements) and, unless a dispatch is already bound to run after it
// commits, a DispatchWebhooks job, which the queue coalesces with one
// already waiting. The deliveries' own jobs, whose insert costs more than
// the rest of an emit (on SQLite mostly in parsing River's statement), are
// inserted here, many in one transaction.
type Dispatcher struct {
	river.WorkerDefaults[agentline.DispatchWebhooks]
	Store  DispatchStore
	Logger *slog.Logger
}

// Work dispatches every delivery waiting for its job. Its first
// transaction completes the job (jobs.CompleteTx) before it looks for
// deliveries: the transaction of a delivery committed after that look
// finds the job completed, not running, and inserts another. A full first
// batch inserts the dispatch job that goes on from there; meanwhile this
// one goes on dispatching (up to 100 batches), rather than leave the rest
// to wait for the queue's pickup of that job.
func (d *Dispatcher) Work(ctx context.Context, j *river.Job[agentline.DispatchWebhooks]) error {
	n, err := d.Store.DispatchDeliveries(ctx, dispatchBatch, func(ctx context.Context, tx *sql.Tx) error {
		return jobs.CompleteTx(ctx, tx, j)
	})
	if err != nil {
		return err
	}
	for i := 0; i < 100 && n == dispatchBatch; i++ {
		if n, err = d.Store.DispatchDeliveries(ctx, dispatchBatch, nil); err != nil {
			// The job is completed: the one the first batch inserted
			// dispatches what is left.
			d.logger().Warn("webhook dispatch failed: the next dispatch job goes on", "err", err)
			return nil
		}
	}
	return nil
}

func (d *Dispatcher) logger() *slog.Logger {
	if d.Logger == nil {
		return slog.Default()
	}
	return d.Logger
}
