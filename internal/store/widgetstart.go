package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentline/agentline"
)

// StartWidgetSession records the provider session opened for a session that
// was created in advance (a form lead's): its origin, provider and model,
// and the start time. A pending session has no provider yet, and the update
// only touches such a session, so it starts once even when starts race: a
// session started already is a conflict (one form submission, one widget
// session), one that does not exist not found.
func (db *DB) StartWidgetSession(ctx context.Context, s agentline.WidgetSession) (agentline.WidgetSession, error) {
	res, err := db.writer().exec(ctx,
		`UPDATE widget_sessions SET origin = ?, provider = ?, model = ?, started_at = ?
		 WHERE project_id = ? AND channel_id = ? AND id = ? AND provider = ''`,
		s.Origin, s.Provider, s.Model, db.now(), s.ProjectID, s.ChannelID, s.ID)
	err = mustAffect(res, err, "session")
	if errors.Is(err, agentline.ErrNotFound) {
		var n int
		if qerr := db.writer().queryRow(ctx, `SELECT COUNT(*) FROM widget_sessions WHERE project_id = ? AND channel_id = ? AND id = ?`,
			s.ProjectID, s.ChannelID, s.ID).Scan(&n); qerr != nil {
			return s, fmt.Errorf("start session: %w", qerr)
		}
		if n > 0 {
			return s, agentline.Errorf(agentline.EConflict, "session %s has been started already: submit the form again for a new conversation", s.ID)
		}
	}
	if err != nil {
		return s, err
	}
	return db.WidgetSession(ctx, s.ProjectID, s.ID)
}
