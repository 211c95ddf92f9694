package store

import (
	"context"

	"github.com/agentline/agentline"
)

// insertSessionIfNoEndpoints writes the session in one statement, outside
// any transaction, when its project has no enabled webhook endpoint (most
// projects): then there is no event to emit with it, and a session costs
// the database one round trip instead of four (BEGIN, insert, endpoints
// look-up, COMMIT), the widget API's hottest write. It reports false,
// having written nothing, when an endpoint exists; the caller then writes
// the session and its event in one transaction. The check and the insert
// are one statement, so they see the same endpoints, as the transaction's
// look-up would. Casts give PostgreSQL the parameters' types, which a
// SELECT list does not.
func insertSessionIfNoEndpoints(ctx context.Context, c conn, s agentline.WidgetSession) (bool, error) {
	q := `INSERT INTO widget_sessions (id, project_id, channel_id, agent_id, origin, provider, model, started_at)
		 SELECT ?, ?, ?, ?, ?, ?, ?, ?
		 WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE project_id = ? AND enabled)`
	if c.db.dialect == Postgres {
		q = `INSERT INTO widget_sessions (id, project_id, channel_id, agent_id, origin, provider, model, started_at)
		 SELECT ?::text, ?::bigint, ?::bigint, ?::bigint, ?::text, ?::text, ?::text, ?::timestamptz
		 WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE project_id = ? AND enabled)`
	}
	res, err := c.exec(ctx, q, s.ID, s.ProjectID, s.ChannelID, s.AgentID, s.Origin, s.Provider, s.Model, s.StartedAt, s.ProjectID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
