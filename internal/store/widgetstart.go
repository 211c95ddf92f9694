package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentline/agentline"
)

// StartWidgetSession records the provider session opened for a session that
// was created in advance (a form lead's): its origin, provider and model,
// and the start time, followed by started in the same transaction. Only a
// pending session (live, no provider yet) is touched, so it starts once
// even when starts race: a session started or ended already is a conflict
// (one form submission, one widget session), one that does not exist not
// found.
func (db *DB) StartWidgetSession(ctx context.Context, s agentline.WidgetSession, started agentline.ConversationFollowUp) (agentline.WidgetSession, error) {
	err := db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx,
			`UPDATE widget_sessions SET origin = ?, provider = ?, model = ?, started_at = ?, agent_version = ?
			 WHERE project_id = ? AND channel_id = ? AND id = ? AND provider = '' AND status = 'live'`,
			s.Origin, s.Provider, s.Model, db.now(), nullVersion(s.AgentVersion), s.ProjectID, s.ChannelID, s.ID)
		if err := mustAffect(res, err, "session"); err != nil {
			return err
		}
		return db.followConversation(ctx, c, started, s.ProjectID, s.ID)
	})
	if errors.Is(err, agentline.ErrNotFound) {
		var n int
		if qerr := db.writer().queryRow(ctx, `SELECT COUNT(*) FROM widget_sessions WHERE project_id = ? AND channel_id = ? AND id = ?`,
			s.ProjectID, s.ChannelID, s.ID).Scan(&n); qerr != nil {
			return s, fmt.Errorf("start session: %w", qerr)
		}
		if n > 0 {
			return s, agentline.Errorf(agentline.EConflict, "session %s has been started or has ended already: submit the form again for a new conversation", s.ID)
		}
	}
	if err != nil {
		return s, err
	}
	return db.WidgetSession(ctx, s.ProjectID, s.ID)
}
