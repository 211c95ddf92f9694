package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// AdmitStream records the one use of the stream token with ref, which
// expires at expires, and answers conflict when it was used before, on this
// instance or another one on the same database: the check is one insert, so
// two instances admitting the same token at once cannot both win. It then
// applies e (the call going in progress) in the same transaction: the one
// write of a stream's admission, so that admissions queue behind one another
// for as short a time as they can. changed follows e as in ApplyCallEvent.
func (db *DB) AdmitStream(ctx context.Context, ref string, expires time.Time, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error) {
	var out agentline.Call
	err := db.tx(ctx, func(c conn) (err error) {
		if err := useStreamToken(ctx, c, ref, expires); err != nil {
			return err
		}
		out, err = db.applyCallEvent(ctx, c, e, changed)
		return err
	})
	return out, err
}

func useStreamToken(ctx context.Context, c conn, ref string, expires time.Time) error {
	res, err := c.exec(ctx, `INSERT INTO stream_token_uses (ref, expires_at) VALUES (?, ?) ON CONFLICT (ref) DO NOTHING`,
		ref, expires.UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("use stream token: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("use stream token: %w", err)
	} else if n == 0 {
		return agentline.Errorf(agentline.EConflict, "this stream token has been used already")
	}
	return nil
}

// DeleteExpiredStreamTokens removes the uses of tokens that have expired:
// those tokens no longer verify, so their rows guard nothing.
func (db *DB) DeleteExpiredStreamTokens(ctx context.Context) (int64, error) {
	res, err := db.writer().exec(ctx, `DELETE FROM stream_token_uses WHERE expires_at < ?`, db.now())
	if err != nil {
		return 0, fmt.Errorf("sweep used stream tokens: %w", err)
	}
	return res.RowsAffected()
}
