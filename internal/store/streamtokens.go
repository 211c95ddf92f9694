package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// UseStreamToken records the one use of the stream token with ref, which
// expires at expires, and answers conflict when it was used before, on this
// instance or another one on the same database. The check is one insert, so
// two instances admitting the same token at once cannot both win. Rows of
// expired tokens are swept first: their tokens no longer verify.
func (db *DB) UseStreamToken(ctx context.Context, ref string, expires time.Time) error {
	w := db.writer()
	if _, err := w.exec(ctx, `DELETE FROM stream_token_uses WHERE expires_at < ?`, db.now()); err != nil {
		return fmt.Errorf("sweep used stream tokens: %w", err)
	}
	res, err := w.exec(ctx, `INSERT INTO stream_token_uses (ref, expires_at) VALUES (?, ?) ON CONFLICT (ref) DO NOTHING`,
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
