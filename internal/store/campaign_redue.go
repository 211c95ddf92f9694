package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/agentline/agentline"
)

// redueContacts makes the pending contacts of a campaign that wait past
// now due at the earliest time the retry rule allows, with retryAfter: a
// contact never dialed at once, one dialed retryAfter after its last call
// ended (or, with no call, after its last dial). The dialing engine moves
// a contact whose window is closed to when it next opens; after a change
// of the window (or of retry_after) that move was made under the old
// rules, so it is made again, under the new, on the engine's next look.
func (db *DB) redueContacts(ctx context.Context, c conn, projectID, campaignID int64, retryAfter time.Duration) error {
	now := db.now()
	rows, err := c.query(ctx, `SELECT ct.id, ct.attempts, ct.created_at, ct.next_attempt_at, d.dialed_at, cl.ended_at
		FROM campaign_contacts ct
		LEFT JOIN campaign_dials d ON d.contact_id = ct.id AND d.attempt = ct.attempts
		LEFT JOIN calls cl ON cl.id = d.call_id
		WHERE ct.project_id = ? AND ct.campaign_id = ? AND ct.status = ? AND ct.next_attempt_at > ?`,
		projectID, campaignID, agentline.ContactPending, now)
	if err != nil {
		return err
	}
	due := map[time.Time][]any{}
	for rows.Next() {
		var id int64
		var attempts int
		var created, next time.Time
		var dialed, ended sql.NullTime
		if err := rows.Scan(&id, &attempts, utc(&created), utc(&next), &dialed, &ended); err != nil {
			rows.Close()
			return err
		}
		at := created
		switch {
		case attempts > 0 && ended.Valid:
			at = ended.Time.UTC().Add(retryAfter)
		case attempts > 0 && dialed.Valid:
			at = dialed.Time.UTC().Add(retryAfter)
		}
		if at.Before(now) {
			at = now
		}
		if at = at.Truncate(time.Microsecond); !at.Equal(next) {
			due[at] = append(due[at], id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for at, ids := range due {
		for start := 0; start < len(ids); start += contactBatch {
			batch := ids[start:min(start+contactBatch, len(ids))]
			if _, err := c.exec(ctx, `UPDATE campaign_contacts SET next_attempt_at = ? WHERE id IN (`+placeholders(len(batch))+`)`,
				append([]any{at}, batch...)...); err != nil {
				return err
			}
		}
	}
	return nil
}
