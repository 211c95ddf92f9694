package store

// Conversations are a read model: a UNION over widget_sessions (with leads,
// which make a session a live chat) and calls, built at query time. Nothing
// is copied, so the existing sessions, leads and calls endpoints and their
// writers stay as they are and a conversation can never disagree with
// them. Widget sessions carry their own life cycle (status, end_reason,
// last_event_at, migration 00011); a call's status maps to a conversation
// status in SQL (agentline.CallConversationStatus says the same in Go).

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// conversationUnion selects every conversation of one project with the
// columns of conversationColumns, and with stats also tool_calls and
// tool_errors; it takes the project id twice.
func conversationUnion(stats bool) string { return conversationUnionWhere(stats, "", "") }

// conversationUnionWhere is conversationUnion with more conditions on its
// sessions (wsWhere) and its calls (callWhere), each starting with AND: a
// condition on the union's computed id ('call_' || c.id) cannot use an
// index, so one conversation is found by its table's own id instead of
// reading every conversation of the project.
func conversationUnionWhere(stats bool, wsWhere, callWhere string) string {
	wsStats, callStats := "", ""
	if stats {
		wsStats = `, ws.tool_calls AS tool_calls,
		(SELECT count(*) FROM session_events e WHERE e.session_id = ws.id AND e.type = 'tool_call'
			AND e.data LIKE '%"is_error":true%') AS tool_errors` + analysisStats("ws.id", " AS evaluated", " AS successes")
		// call_events.data is jsonb on PostgreSQL, whose text has spaces.
		callStats = `, (SELECT count(*) FROM call_events e WHERE e.call_id = c.id AND e.type = 'tool_call'),
		(SELECT count(*) FROM call_events e WHERE e.call_id = c.id AND e.type = 'tool_call'
			AND replace(CAST(e.data AS TEXT), ' ', '') LIKE '%"is_error":true%')` + analysisStats("'call_' || c.id", "", "")
	}
	return `
	SELECT ws.id AS id, ws.project_id AS project_id, ws.agent_id AS agent_id,
		CASE WHEN EXISTS (SELECT 1 FROM leads l WHERE l.session_id = ws.id) THEN 'live_chat' ELSE 'widget' END AS kind,
		ws.channel_id AS channel_id, CAST(NULL AS BIGINT) AS number_id,
		'' AS direction, '' AS from_number, '' AS to_number, ws.status AS status,
		ws.started_at AS started_at, ws.ended_at AS ended_at, ws.last_event_at AS last_event_at,
		ws.duration_ms AS duration_ms, ws.end_reason AS end_reason, CAST(NULL AS BIGINT) AS call_ref,
		CAST(NULL AS BIGINT) AS campaign_id, CAST(NULL AS BIGINT) AS contact_id, '' AS variables,
		ws.agent_version AS agent_version` + wsStats + `
	FROM widget_sessions ws WHERE ws.project_id = ?` + wsWhere + `
	UNION ALL
	SELECT 'call_' || c.id, c.project_id, c.agent_id, 'phone', CAST(NULL AS BIGINT), c.number_id,
		c.direction, c.from_number, c.to_number,
		CASE WHEN c.status = 'completed' THEN 'ended'
			WHEN c.status IN ('busy', 'failed', 'no-answer', 'canceled') THEN 'failed' ELSE 'live' END,
		coalesce(c.started_at, c.created_at), c.ended_at, c.updated_at,
		coalesce(c.duration_s, 0) * 1000, c.end_reason, c.id, c.campaign_id, c.contact_id, c.variables, c.agent_version` + callStats + `
	FROM calls c WHERE c.project_id = ?` + callWhere
}

const conversationColumns = `id, project_id, agent_id, kind, channel_id, number_id, direction, from_number, to_number,
	status, started_at, ended_at, last_event_at, duration_ms, end_reason, call_ref, campaign_id, contact_id, variables, agent_version`

// anyTime scans a time that a UNION may hand over as text (SQLite loses the
// column's declared type there).
type anyTime struct {
	t     *time.Time
	valid *bool
}

var timeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"}

func (s anyTime) Scan(src any) error {
	*s.valid = src != nil
	switch v := src.(type) {
	case nil:
		return nil
	case time.Time:
		*s.t = v.UTC()
		return nil
	case []byte:
		src = string(v)
	}
	text, ok := src.(string)
	if !ok {
		return fmt.Errorf("conversation time: unexpected %T", src)
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, text); err == nil {
			*s.t = t.UTC()
			return nil
		}
	}
	return fmt.Errorf("conversation time: cannot parse %q", text)
}

// convRow is a conversation as the union gives it, with its call id.
type convRow struct {
	agentline.Conversation
	callRef sql.NullInt64
	// lat and latAt: the turn latencies (ms) read with the details, and
	// when each was recorded.
	lat   []int64
	latAt []time.Time
}

// addLatency keeps one turn_latency event's value; data is its JSON.
func (r *convRow) addLatency(data string, at time.Time) {
	var d struct {
		LatencyMS *int64 `json:"latency_ms"`
	}
	if json.Unmarshal([]byte(data), &d) != nil || d.LatencyMS == nil || len(r.lat) >= agentline.MaxTurnLatencies {
		return
	}
	r.lat, r.latAt = append(r.lat, *d.LatencyMS), append(r.latAt, at)
}

func scanConversation(row interface{ Scan(...any) error }) (convRow, error) {
	var r convRow
	var channelID, numberID, campaignID, contactID, version sql.NullInt64
	var ended, last time.Time
	var okStart, okEnded, okLast bool
	var vars string
	err := row.Scan(&r.ID, &r.ProjectID, &r.AgentID, &r.Kind, &channelID, &numberID, &r.Direction, &r.From, &r.To,
		&r.Status, anyTime{&r.StartedAt, &okStart}, anyTime{&ended, &okEnded}, anyTime{&last, &okLast},
		&r.DurationMS, &r.EndReason, &r.callRef, &campaignID, &contactID, &vars, &version)
	if err != nil {
		return r, err
	}
	if version.Valid {
		v := int(version.Int64)
		r.AgentVersion = &v
	}
	r.CampaignID, r.ContactID = nullInt64(campaignID), nullInt64(contactID)
	if r.Variables, err = callVariables(r.callRef.Int64, vars); err != nil {
		return r, err
	}
	if channelID.Valid {
		r.ChannelID = &channelID.Int64
	}
	if numberID.Valid {
		r.NumberID = &numberID.Int64
	}
	if okEnded {
		r.EndedAt = &ended
	}
	if okLast {
		r.LastEventAt = &last
	}
	r.Transcript, r.ToolCalls = []agentline.Line{}, []agentline.ToolUse{}
	return r, nil
}

// likePattern is a LIKE pattern matching s anywhere, lower case, with the
// wildcards in s escaped (ESCAPE '\').
func likePattern(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(s))
	return "%" + s + "%"
}

// conversationWhere is the WHERE clause of the filter over the union.
func conversationWhere(f agentline.ConversationFilter) (string, []any) {
	where, args := []string{"1 = 1"}, []any{}
	add := func(cond string, a ...any) { where, args = append(where, cond), append(args, a...) }
	if f.ID != "" {
		add("id = ?", f.ID)
		if callID, ok := agentline.ParseCallConversationID(f.ID); ok {
			// A call's conversation id is computed ('call_' || id), which
			// no index serves: without its own id the database reads every
			// call of the project to find one (each call's analysis does).
			add("call_ref = ?", callID)
		}
	}
	if f.Kind != "" {
		add("kind = ?", f.Kind)
	}
	if f.AgentID != 0 {
		add("agent_id = ?", f.AgentID)
	}
	if f.AgentVersion != 0 {
		add("agent_version = ?", f.AgentVersion)
	}
	if f.ChannelID != 0 {
		add("channel_id = ?", f.ChannelID)
	}
	if f.NumberID != 0 {
		add("number_id = ?", f.NumberID)
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if !f.From.IsZero() {
		add("started_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		add("started_at < ?", f.To.UTC())
	}
	if f.Query != "" {
		p := likePattern(f.Query)
		add(`(EXISTS (SELECT 1 FROM session_events e WHERE e.session_id = conv.id AND e.type = 'transcript'
				AND lower(e.data) LIKE ? ESCAPE '\')
			OR EXISTS (SELECT 1 FROM call_events e WHERE e.call_id = conv.call_ref AND e.type = 'transcript'
				AND lower(e.text) LIKE ? ESCAPE '\'))`, p, p)
	}
	analysisWhere(f, add)
	if f.After != nil {
		at := f.After.StartedAt.UTC()
		add("(started_at < ? OR (started_at = ? AND id < ?))", at, at, f.After.ID)
	}
	return strings.Join(where, " AND "), args
}

// Conversations lists the project's conversations, newest first, each
// whole: transcript, tool calls and, for a live chat, its lead. Their
// several reads see one moment (readTx).
func (db *DB) Conversations(ctx context.Context, projectID int64, f agentline.ConversationFilter) ([]agentline.Conversation, error) {
	return readIn(ctx, db, func(c conn) ([]agentline.Conversation, error) { return conversations(ctx, c, projectID, f) })
}

func conversations(ctx context.Context, c conn, projectID int64, f agentline.ConversationFilter) ([]agentline.Conversation, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	where, args := conversationWhere(f)
	union, pre := conversationUnion(false), []any{projectID, projectID}
	if callID, ok := agentline.ParseCallConversationID(f.ID); ok {
		union, pre = conversationUnionWhere(false, " AND 1 = 0", " AND c.id = ?"), []any{projectID, projectID, callID}
	} else if f.ID != "" {
		union, pre = conversationUnionWhere(false, " AND ws.id = ?", " AND 1 = 0"), []any{projectID, f.ID, projectID}
	}
	args = append(pre, append(args, f.Limit)...)
	rows, err := queryAll(ctx, c, scanConversation, `SELECT `+conversationColumns+` FROM (`+union+`) conv
		WHERE `+where+` ORDER BY started_at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	if err := addConversationDetails(ctx, c, rows); err != nil {
		return nil, fmt.Errorf("conversation details: %w", err)
	}
	if err := addAnalyses(ctx, c, rows); err != nil {
		return nil, fmt.Errorf("conversation analyses: %w", err)
	}
	out := make([]agentline.Conversation, len(rows))
	for i, r := range rows {
		out[i] = r.Conversation
	}
	return out, nil
}

// Conversation returns one conversation of the project, whole.
func (db *DB) Conversation(ctx context.Context, projectID int64, id string) (agentline.Conversation, error) {
	return readIn(ctx, db, func(c conn) (agentline.Conversation, error) { return conversationIn(ctx, c, projectID, id) })
}

func conversationIn(ctx context.Context, c conn, projectID int64, id string) (agentline.Conversation, error) {
	list, err := conversations(ctx, c, projectID, agentline.ConversationFilter{ID: id, Limit: 1})
	if err != nil {
		return agentline.Conversation{}, err
	}
	if len(list) == 0 {
		return agentline.Conversation{}, agentline.NotFound("conversation")
	}
	return list[0], nil
}

// ProjectOfConversation returns the id of the project that owns the
// conversation, so that handlers addressed by a conversation id can
// authorize before loading it.
func (db *DB) ProjectOfConversation(ctx context.Context, id string) (int64, error) {
	var projectID int64
	var err error
	if callID, ok := agentline.ParseCallConversationID(id); ok {
		err = db.reader().queryRow(ctx, `SELECT project_id FROM calls WHERE id = ?`, callID).Scan(&projectID)
	} else {
		err = db.reader().queryRow(ctx, `SELECT project_id FROM widget_sessions WHERE id = ?`, id).Scan(&projectID)
	}
	return projectID, notFound(err, "conversation")
}

// DeleteConversation deletes a conversation of the project: the widget
// session with its events, or the call with its log. A live chat's lead
// stays (without its session). Its analysis goes with it.
func (db *DB) DeleteConversation(ctx context.Context, projectID int64, id string) error {
	return db.tx(ctx, func(c conn) error {
		var res sql.Result
		var err error
		if callID, ok := agentline.ParseCallConversationID(id); ok {
			res, err = c.exec(ctx, `DELETE FROM calls WHERE project_id = ? AND id = ?`, projectID, callID)
		} else {
			res, err = c.exec(ctx, `DELETE FROM widget_sessions WHERE project_id = ? AND id = ?`, projectID, id)
		}
		if err := mustAffect(res, err, "conversation"); err != nil {
			return err
		}
		if _, err = c.exec(ctx, `DELETE FROM conversation_analyses WHERE project_id = ? AND conversation_id = ?`, projectID, id); err != nil {
			return err
		}
		return c.audit(ctx, audited{project: projectID, action: "conversation.delete", kind: "conversation", id: id})
	})
}
