package store

import (
	"context"
	"slices"
	"strings"

	"github.com/agentline/agentline"
)

// maxSessionBatch bounds one group insert: 64 rows of 8 parameters stay
// far below both databases' parameter limits.
const maxSessionBatch = 64

// The widget API's hottest write is group-committed (db.sessions, a
// coalesce.Group over insertSessions): the sessions that arrive while one
// insert is in flight are written together by the next, in one statement
// and one commit. A busy PostgreSQL spends about half the CPU per session
// on a three-row insert that it spends on three one-row inserts
// (docs/benchmarks.md), and each session waits for at most one round trip
// in flight instead of queueing for a pooled connection. The batch is an
// optimisation only: when its statement fails (a duplicate id, a deleted
// project, a cancelled leader), CreateWidgetSession writes each session
// alone with its own context, so errors stay per request.

// insertSessions writes the sessions whose project has no enabled webhook
// endpoint in one statement and reports, per session, whether it was
// written (the others are left to the caller, to write with their
// conversation.started event). Most projects have no endpoint, and then a
// session costs one statement outside any transaction instead of four
// (BEGIN, insert, endpoints look-up, COMMIT). The check and the insert are
// one statement, so they see the same endpoints, as a transaction's
// look-up would. Casts give PostgreSQL the parameters' types, which a
// VALUES list does not.
func (db *DB) insertSessions(ctx context.Context, batch []agentline.WidgetSession) ([]bool, error) {
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
	if db.dialect == Postgres {
		row = "(?::text, ?::bigint, ?::bigint, ?::bigint, ?::text, ?::text, ?::text, ?::timestamptz, ?::integer)"
	}
	rows := make([]string, len(batch))
	args := make([]any, 0, 9*len(batch))
	for i, s := range batch {
		rows[i] = row
		args = append(args, s.ID, s.ProjectID, s.ChannelID, s.AgentID, s.Origin, s.Provider, s.Model, s.StartedAt, nullVersion(s.AgentVersion))
	}
	q := `WITH v (id, project_id, channel_id, agent_id, origin, provider, model, started_at, agent_version) AS (VALUES ` + strings.Join(rows, ", ") + `)
		INSERT INTO widget_sessions (id, project_id, channel_id, agent_id, origin, provider, model, started_at, agent_version)
		SELECT id, project_id, channel_id, agent_id, origin, provider, model, started_at, agent_version FROM v
		WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.project_id = v.project_id AND e.enabled)
		RETURNING id`
	ids, err := queryAll(ctx, db.writer(), scanString, q, args...)
	if err != nil {
		return nil, err
	}
	written := make([]bool, len(batch))
	for i, s := range batch {
		written[i] = slices.Contains(ids, s.ID)
	}
	return written, nil
}
