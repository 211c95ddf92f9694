package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// AddCoalescing registers w as the worker of T's kind, whose jobs coalesce:
// inserting one while another waits (available, scheduled, pending) or
// runs inserts nothing (River's unique jobs, by kind and state). It suits
// a job that works off whatever is left to do when it runs: the writes of
// many transactions share one pending run. Since a job inserted while one
// runs is dropped, the worker must end its run with CompleteTx in the
// transaction of its last look for work (see CompleteTx).
//
// A failed run (retryable) does not hold back the next insert: the work a
// new transaction leaves need not wait for the failed run's backoff. But a
// run whose instance died stays running until the queue rescues it
// (Options.RescueAfter), and inserts coalesce with it meanwhile. So, when
// every is positive, one more is inserted every interval and at start,
// which does not coalesce: the work left behind waits that long at most.
func AddCoalescing[T river.JobArgs](r *Registry, w river.Worker[T], maxAttempts int, every time.Duration, args T) {
	river.AddWorker(r.workers, w)
	r.opts[args.Kind()] = river.InsertOpts{MaxAttempts: maxAttempts, UniqueOpts: river.UniqueOpts{ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
	if every > 0 {
		r.addPeriodic(every, args, river.InsertOpts{MaxAttempts: maxAttempts}, nil)
	}
}

// AddCoalescingByArgs registers w as the worker of T's kind, whose jobs
// coalesce per distinct arguments (one campaign's dialing, say): inserting
// a job while one with the same arguments waits or runs inserts nothing.
// The worker ends its run with CompleteTx in the transaction of its last
// look for work, as for AddCoalescing.
func AddCoalescingByArgs[T river.JobArgs](r *Registry, w river.Worker[T], maxAttempts int) {
	var zero T
	river.AddWorker(r.workers, w)
	r.opts[zero.Kind()] = river.InsertOpts{MaxAttempts: maxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
}

// CompleteTx marks the running job j completed in tx, a store transaction,
// so that its completion commits (or not) with the rest of tx. A coalescing
// job's worker calls it before its last look for work, in the same
// transaction: a transaction that inserted a job of the kind meanwhile
// either committed before that look (which then sees its work), or holds
// the job's row until it commits (which the completion waits for, and the
// look, a statement after it, then sees), or finds the job completed and
// inserts a new one. It works only inside the job's Work.
func CompleteTx[T river.JobArgs](ctx context.Context, tx *sql.Tx, j *river.Job[T]) error {
	if _, err := river.ClientFromContextSafely[*sql.Tx](ctx); err != nil {
		return fmt.Errorf("complete job %d: %w", j.ID, err)
	}
	if _, err := river.JobCompleteTx[riverdriver.Driver[*sql.Tx]](ctx, tx, j); err != nil {
		return fmt.Errorf("complete job %d: %w", j.ID, err)
	}
	return nil
}
