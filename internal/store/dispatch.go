package store

import (
	"context"
	"fmt"

	"github.com/agentline/agentline"
)

// afterCommit is what a write transaction does once committed.
type afterCommit struct{ wake bool }

// wakeDispatcher asks for the dispatcher to be woken once the transaction
// commits (before, it would not see the deliveries). Outside a transaction
// (a nil afterCommit) it does nothing: the dispatcher's polling finds them.
func (a *afterCommit) wakeDispatcher() {
	if a != nil {
		a.wake = true
	}
}

func (a *afterCommit) run(db *DB) {
	if a.wake && db.outbox.Wake != nil {
		db.outbox.Wake()
	}
}

// DispatchDeliveries gives up to limit deliveries that have no job yet
// their DeliverWebhook jobs, oldest first, in one transaction that also
// marks them queued; it returns how many. On PostgreSQL, instances
// dispatching at once skip each other's rows (FOR UPDATE SKIP LOCKED), so
// each delivery gets one job.
func (db *DB) DispatchDeliveries(ctx context.Context, limit int) (int, error) {
	n := 0
	err := db.tx(ctx, func(c conn) error {
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
		return db.outboxOn(c).Enqueue(ctx, jobs...)
	})
	if err != nil {
		return 0, fmt.Errorf("dispatch webhook deliveries: %w", err)
	}
	return n, nil
}
