package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentline/agentline"
)

// txState is what a write transaction has done so far that its later
// statements need to know.
type txState struct {
	// dispatching is set once the transaction has inserted its
	// DispatchWebhooks job, which its other deliveries then share.
	dispatching bool
}

// dispatchAfterCommit inserts, once per transaction, the DispatchWebhooks
// job that gives the deliveries the transaction stores their jobs once it
// commits. The job queue coalesces it with one already waiting, so a
// burst of requests shares one dispatch.
func (o *outbox) dispatchAfterCommit(ctx context.Context) error {
	if o.c.tx == nil {
		return errors.New("dispatch: not in a transaction")
	}
	if o.c.tx.dispatching {
		return nil
	}
	if err := o.Enqueue(ctx, agentline.DispatchWebhooks{}); err != nil {
		return err
	}
	o.c.tx.dispatching = true
	return nil
}

// DispatchDeliveries gives up to limit deliveries that have no job yet
// their DeliverWebhook jobs, oldest first, in one transaction that also
// marks them queued; it returns how many. On PostgreSQL, dispatches
// running at once skip each other's rows (FOR UPDATE SKIP LOCKED), so each
// delivery gets one job.
//
// finish, when not nil, runs first in the transaction: the DispatchWebhooks
// job's completion (see jobs.CompleteTx), so that a transaction storing
// deliveries meanwhile either is seen here or inserts a new dispatch job.
// If that transaction then fills limit, it also inserts the job that
// dispatches the rest.
func (db *DB) DispatchDeliveries(ctx context.Context, limit int, finish func(ctx context.Context, tx *sql.Tx) error) (int, error) {
	n := 0
	err := db.tx(ctx, func(c conn) error {
		if finish != nil {
			tx, ok := c.q.(*sql.Tx)
			if !ok {
				return errors.New("not in a transaction")
			}
			if err := finish(ctx, tx); err != nil {
				return err
			}
		}
		claimed, err := queryAll(ctx, c, func(r interface{ Scan(...any) error }) (agentline.DeliverWebhook, error) {
			var j agentline.DeliverWebhook
			return j, r.Scan(&j.DeliveryID, &j.EndpointID)
		}, `SELECT id, endpoint_id FROM webhook_deliveries WHERE NOT queued ORDER BY id LIMIT ?`+db.skipLocked(), limit)
		if err != nil || len(claimed) == 0 {
			return err
		}
		jobs, ids := make([]agentline.Job, len(claimed)), make([]any, len(claimed))
		for i, j := range claimed {
			jobs[i], ids[i] = j, j.DeliveryID
		}
		if _, err := c.exec(ctx, `UPDATE webhook_deliveries SET queued = TRUE WHERE id IN (`+placeholders(len(ids))+`)`, ids...); err != nil {
			return err
		}
		n = len(ids)
		out := db.outboxOn(c)
		if err := out.Enqueue(ctx, jobs...); err != nil {
			return err
		}
		if finish != nil && n == limit {
			return out.dispatchAfterCommit(ctx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("dispatch webhook deliveries: %w", err)
	}
	return n, nil
}
