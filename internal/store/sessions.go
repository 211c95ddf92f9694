package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

const sessionColumns = `id, project_id, channel_id, agent_id, origin, provider, model, started_at, ended_at, duration_ms, tool_calls, errors`

func scanSession(row interface{ Scan(...any) error }) (agentline.WidgetSession, error) {
	var s agentline.WidgetSession
	var ended sql.NullTime
	if err := row.Scan(&s.ID, &s.ProjectID, &s.ChannelID, &s.AgentID, &s.Origin, &s.Provider, &s.Model,
		utc(&s.StartedAt), &ended, &s.DurationMS, &s.ToolCalls, &s.Errors); err != nil {
		return s, err
	}
	if ended.Valid {
		t := ended.Time.UTC()
		s.EndedAt = &t
	}
	return s, nil
}

// CreateWidgetSession stores a new session; its id is chosen by the caller.
// When the project has an enabled webhook endpoint, the session is written
// in a transaction that runs started (what follows a start) with it;
// otherwise the session is one row of a group insert (sessionbatch.go), or
// the same insert of its row alone when that one failed, and started does
// not run: a start is followed by its conversation.started event alone,
// which a project without endpoints does not store.
func (db *DB) CreateWidgetSession(ctx context.Context, s agentline.WidgetSession, started agentline.ConversationFollowUp) (agentline.WidgetSession, error) {
	if s.StartedAt.IsZero() {
		s.StartedAt = db.now()
	}
	inserted, err := db.sessions.Do(ctx, s)
	if err != nil { // the batch failed: write s alone, for its own error
		var written []bool
		if written, err = db.insertSessions(ctx, []agentline.WidgetSession{s}); err == nil {
			inserted = written[0]
		}
	}
	if err == nil && !inserted {
		err = db.tx(ctx, func(c conn) error {
			if err := insertSession(ctx, c, s, s.StartedAt); err != nil {
				return err
			}
			return db.followConversation(ctx, c, started, s.ProjectID, s.ID)
		})
	}
	if isUniqueViolation(err) {
		return s, agentline.Errorf(agentline.EConflict, "session %s exists already", s.ID)
	}
	if isForeignKeyViolation(err) {
		return s, agentline.NotFound("project")
	}
	if err != nil {
		return s, fmt.Errorf("create widget session: %w", err)
	}
	return s, nil
}

// insertSession writes a new session record that started at startedAt.
func insertSession(ctx context.Context, c conn, s agentline.WidgetSession, startedAt time.Time) error {
	_, err := c.exec(ctx,
		`INSERT INTO widget_sessions (id, project_id, channel_id, agent_id, origin, provider, model, started_at, agent_version)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.ProjectID, s.ChannelID, s.AgentID, s.Origin, s.Provider, s.Model, startedAt, nullVersion(s.AgentVersion))
	return err
}

// WidgetSession returns one session of the project.
func (db *DB) WidgetSession(ctx context.Context, projectID int64, id string) (agentline.WidgetSession, error) {
	s, err := scanSession(db.reader().queryRow(ctx,
		`SELECT `+sessionColumns+` FROM widget_sessions WHERE project_id = ? AND id = ?`, projectID, id))
	return s, notFound(err, "session")
}

// AddSessionEvents appends events to a session of the project and keeps the
// session's counters: tool calls, errors, the time of the last event
// (heartbeats count, and are not stored), and at the first session_ended
// of a live session its end: status ended, end time, duration and reason
// (data.reason, else "ended"), followed by ended in the same transaction.
func (db *DB) AddSessionEvents(ctx context.Context, projectID int64, sessionID string, events []agentline.SessionEvent,
	ended agentline.ConversationFollowUp) error {
	return db.tx(ctx, func(c conn) error {
		var started time.Time
		var endedAt sql.NullTime
		var status string
		err := c.queryRow(ctx, `SELECT started_at, ended_at, status FROM widget_sessions WHERE project_id = ? AND id = ?`,
			projectID, sessionID).Scan(utc(&started), &endedAt, &status)
		if err != nil {
			return notFound(err, "session")
		}
		var tools, errs int
		var last time.Time
		endedNow := false
		for _, e := range events {
			last = maxTime(last, e.At.UTC())
			switch e.Type {
			case agentline.EventHeartbeat:
				continue
			case agentline.EventToolCall:
				tools++
			case agentline.EventError:
				errs++
			}
			if err := insertSessionEvent(ctx, c, sessionID, e); err != nil {
				return err
			}
			if e.Type == agentline.EventSessionEnded && !endedAt.Valid && status == agentline.ConversationLive {
				endedAt = sql.NullTime{Time: e.At.UTC(), Valid: true}
				if err := endSession(ctx, c, sessionID, started, endedAt.Time, endReason(e.Data)); err != nil {
					return err
				}
				endedNow = true
			}
		}
		if last.IsZero() {
			return nil
		}
		_, err = c.exec(ctx, `UPDATE widget_sessions SET tool_calls = tool_calls + ?, errors = errors + ?,
			last_event_at = CASE WHEN last_event_at IS NULL OR last_event_at < ? THEN ? ELSE last_event_at END WHERE id = ?`,
			tools, errs, last, last, sessionID)
		if err != nil || !endedNow {
			return err
		}
		return db.followConversation(ctx, c, ended, projectID, sessionID)
	})
}

// where is the WHERE clause and its arguments for the filter's project,
// channel, agent and [From, To) on the time column; ID is left to the
// caller, as only sessions have it.
//
// f.After starts the list after a row (newest first, by time and id);
// afterID is its id as the table's id column takes it.
func sessionWhere(f agentline.SessionFilter, projectID int64, timeColumn string, afterID any) (string, []any) {
	where := []string{"project_id = ?"}
	args := []any{projectID}
	if f.ChannelID != 0 {
		where, args = append(where, "channel_id = ?"), append(args, f.ChannelID)
	}
	if f.AgentID != 0 {
		where, args = append(where, "agent_id = ?"), append(args, f.AgentID)
	}
	if !f.From.IsZero() {
		where, args = append(where, timeColumn+" >= ?"), append(args, f.From.UTC())
	}
	if !f.To.IsZero() {
		where, args = append(where, timeColumn+" < ?"), append(args, f.To.UTC())
	}
	if f.After != nil {
		at := f.After.StartedAt.UTC()
		where = append(where, "("+timeColumn+" < ? OR ("+timeColumn+" = ? AND id < ?))")
		args = append(args, at, at, afterID)
	}
	return strings.Join(where, " AND "), args
}

// WidgetSessions lists the project's sessions, newest first, each with its
// events in order, both read at one moment (readTx): a session's status
// agrees with its events.
func (db *DB) WidgetSessions(ctx context.Context, projectID int64, f agentline.SessionFilter) ([]agentline.SessionWithEvents, error) {
	return readIn(ctx, db, func(c conn) ([]agentline.SessionWithEvents, error) { return widgetSessionsIn(ctx, c, projectID, f) })
}

// widgetSessionsIn is WidgetSessions read on c.
func widgetSessionsIn(ctx context.Context, c conn, projectID int64, f agentline.SessionFilter) ([]agentline.SessionWithEvents, error) {
	var afterID any
	if f.After != nil {
		afterID = f.After.ID
	}
	where, args := sessionWhere(f, projectID, "started_at", afterID)
	if f.ID != "" {
		where, args = where+" AND id = ?", append(args, f.ID)
	}
	args = append(args, f.Limit, f.Offset)
	rows, err := c.query(ctx, `SELECT `+sessionColumns+` FROM widget_sessions WHERE `+where+
		` ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?`, args...)
	if err != nil {
		return nil, err
	}
	out := []agentline.SessionWithEvents{}
	index := map[string]int{}
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		index[s.ID] = len(out)
		out = append(out, agentline.SessionWithEvents{WidgetSession: s, Events: []agentline.SessionEvent{}})
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]any, 0, len(out))
	for _, s := range out {
		ids = append(ids, s.ID)
	}
	erows, err := c.query(ctx, `SELECT session_id, type, at, data FROM session_events WHERE session_id IN (?`+
		strings.Repeat(", ?", len(ids)-1)+`) ORDER BY id`, ids...)
	if err != nil {
		return nil, err
	}
	defer erows.Close()
	for erows.Next() {
		var id, data string
		var e agentline.SessionEvent
		if err := erows.Scan(&id, &e.Type, utc(&e.At), &data); err != nil {
			return nil, err
		}
		e.Data = json.RawMessage(data)
		out[index[id]].Events = append(out[index[id]].Events, e)
	}
	return out, erows.Err()
}

// SessionAnalytics sums the project's sessions started in [from, to) per
// UTC day and channel.
func (db *DB) SessionAnalytics(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.AnalyticsRow, error) {
	day := `substr(started_at, 1, 10)`
	if db.dialect == Postgres {
		day = `to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
	}
	rows, err := db.reader().query(ctx, `SELECT `+day+` AS day, channel_id, count(*), coalesce(sum(duration_ms), 0),
		coalesce(sum(tool_calls), 0), coalesce(sum(errors), 0)
		FROM widget_sessions WHERE project_id = ? AND started_at >= ? AND started_at < ?
		GROUP BY day, channel_id ORDER BY day, channel_id`, projectID, from.UTC(), to.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []agentline.AnalyticsRow{}
	for rows.Next() {
		var r agentline.AnalyticsRow
		var ms int64
		if err := rows.Scan(&r.Day, &r.ChannelID, &r.Sessions, &ms, &r.ToolCalls, &r.Errors); err != nil {
			return nil, err
		}
		r.Minutes = float64(ms) / 60000
		out = append(out, r)
	}
	return out, rows.Err()
}
