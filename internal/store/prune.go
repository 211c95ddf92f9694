package store

import (
	"context"
	"fmt"
	"time"
)

// pruneBatch is how many rows one pruning statement deletes: short
// statements, so that on SQLite the single writer is not held for long and
// requests' writes interleave with a large backlog's pruning.
const pruneBatch = 1000

// PruneWebhooks deletes what event webhooks no longer need: deliveries
// finished (delivered or given up) before before, with their attempts, and
// the events older than before that no delivery refers to any more (those
// of finished deliveries, and those whose endpoints were deleted). Pending
// deliveries and their events are kept whatever their age. It returns how
// many deliveries and events it deleted.
func (db *DB) PruneWebhooks(ctx context.Context, before time.Time) (deliveries, events int64, err error) {
	before = before.UTC()
	deliveries, err = db.pruneLoop(ctx, `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
		WHERE status <> 'pending' AND updated_at < ? ORDER BY updated_at LIMIT ?)`, before, pruneBatch)
	if err != nil {
		return deliveries, 0, fmt.Errorf("prune webhook deliveries: %w", err)
	}
	events, err = db.pruneLoop(ctx, `DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events e
		WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id) ORDER BY created_at LIMIT ?)`,
		before, pruneBatch)
	if err != nil {
		return deliveries, events, fmt.Errorf("prune webhook events: %w", err)
	}
	return deliveries, events, nil
}

// pruneLoop runs one batched DELETE (its last argument the batch size)
// until it deletes less than a batch, or ctx ends. The attempts of a
// deleted delivery go with it (ON DELETE CASCADE).
func (db *DB) pruneLoop(ctx context.Context, q string, args ...any) (int64, error) {
	var total int64
	for {
		res, err := db.writer().exec(ctx, q, args...)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
