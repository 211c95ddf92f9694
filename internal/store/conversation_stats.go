package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// utcDay is the SQL of the UTC day (YYYY-MM-DD) of a time column.
func (db *DB) utcDay(column string) string {
	if db.dialect == Postgres {
		return `to_char(` + column + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
	}
	return `substr(` + column + `, 1, 10)`
}

// ConversationStats sums the project's conversations of every kind started
// in [from, to) per UTC day, kind, channel or number, agent, status and
// end reason.
func (db *DB) ConversationStats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.ConversationStat, error) {
	rows, err := db.reader().query(ctx, `SELECT `+db.utcDay("started_at")+` AS day, kind, channel_id, number_id, agent_id,
		status, end_reason, count(*), coalesce(sum(duration_ms), 0), coalesce(sum(tool_calls), 0), coalesce(sum(tool_errors), 0),
		coalesce(sum(evaluated), 0), coalesce(sum(successes), 0)
		FROM (`+conversationUnion(true)+`) conv WHERE started_at >= ? AND started_at < ?
		GROUP BY day, kind, channel_id, number_id, agent_id, status, end_reason
		ORDER BY day, kind, channel_id, number_id, agent_id, status, end_reason`,
		projectID, projectID, from.UTC(), to.UTC())
	if err != nil {
		return nil, fmt.Errorf("conversation stats: %w", err)
	}
	defer rows.Close()
	out := []agentline.ConversationStat{}
	for rows.Next() {
		var s agentline.ConversationStat
		var channelID, numberID sql.NullInt64
		if err := rows.Scan(&s.Day, &s.Kind, &channelID, &numberID, &s.AgentID, &s.Status, &s.EndReason,
			&s.Conversations, &s.DurationMS, &s.ToolCalls, &s.ToolErrors, &s.Evaluated, &s.Successes); err != nil {
			return nil, err
		}
		s.SuccessRate = agentline.SuccessRate(s.Successes, s.Evaluated)
		if channelID.Valid {
			s.ChannelID = &channelID.Int64
		}
		if numberID.Valid {
			s.NumberID = &numberID.Int64
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// analysisStats selects, for the conversation whose id is the SQL idExpr,
// whether its analysis judged success (evaluated) and found it
// (successes), as 0 or 1, with the column aliases given.
func analysisStats(idExpr, evaluatedAs, successesAs string) string {
	return `,
		(SELECT count(*) FROM conversation_analyses a WHERE a.conversation_id = ` + idExpr + `
			AND a.status = 'done' AND a.success IS NOT NULL)` + evaluatedAs + `,
		(SELECT count(*) FROM conversation_analyses a WHERE a.conversation_id = ` + idExpr + `
			AND a.status = 'done' AND a.success = TRUE)` + successesAs
}

// LeadStats counts the project's leads created in [from, to) per UTC day
// and form channel.
func (db *DB) LeadStats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.LeadStat, error) {
	return queryAll(ctx, db.reader(), func(row interface{ Scan(...any) error }) (agentline.LeadStat, error) {
		var s agentline.LeadStat
		return s, row.Scan(&s.Day, &s.ChannelID, &s.Leads)
	}, `SELECT `+db.utcDay("created_at")+` AS day, channel_id, count(*) FROM leads
		WHERE project_id = ? AND created_at >= ? AND created_at < ? GROUP BY day, channel_id ORDER BY day, channel_id`,
		projectID, from.UTC(), to.UTC())
}

// VersionStats sums the project's conversations started in [from, to) per
// agent and agent version, with their analysed successes, for comparing
// versions.
func (db *DB) VersionStats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.VersionStat, error) {
	return queryAll(ctx, db.reader(), func(row interface{ Scan(...any) error }) (agentline.VersionStat, error) {
		var s agentline.VersionStat
		var version sql.NullInt64
		if err := row.Scan(&s.AgentID, &version, &s.Conversations, &s.Evaluated, &s.Successes); err != nil {
			return s, err
		}
		if version.Valid {
			v := int(version.Int64)
			s.AgentVersion = &v
		}
		s.SuccessRate = agentline.SuccessRate(s.Successes, s.Evaluated)
		return s, nil
	}, `SELECT agent_id, agent_version, count(*), coalesce(sum(evaluated), 0), coalesce(sum(successes), 0)
		FROM (`+conversationUnion(true)+`) conv WHERE started_at >= ? AND started_at < ?
		GROUP BY agent_id, agent_version ORDER BY agent_id, agent_version`,
		projectID, projectID, from.UTC(), to.UTC())
}
