package store

import (
	"context"
	"fmt"
	"time"
)

// ClaimStaleCalls picks up to limit calls our records show live (queued,
// ringing, in progress) whose record has not changed, and whose carrier
// has not been asked about them, since before, and marks them asked at
// now, in one statement: instances reconciling at the same time never
// claim the same call. Placeholder SIDs of calls the carrier never
// placed are left alone. It returns the calls' SIDs.
func (db *DB) ClaimStaleCalls(ctx context.Context, before, now time.Time, limit int) ([]string, error) {
	q := `UPDATE calls SET carrier_checked_at = ? WHERE id IN (SELECT id FROM calls
		WHERE ` + callIsLive + ` AND call_sid NOT LIKE 'pending:%' AND coalesce(carrier_checked_at, updated_at) < ?
		ORDER BY coalesce(carrier_checked_at, updated_at), id LIMIT ?` + db.skipLocked() + `) RETURNING call_sid`
	sids, err := queryAll(ctx, db.writer(), scanString, q, now.UTC(), before.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("claim stale calls: %w", err)
	}
	return sids, nil
}
