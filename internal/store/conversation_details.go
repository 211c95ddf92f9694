package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// placeholders is "?, ?, ..." for n arguments.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// addConversationDetails fills in the transcripts, tool calls and leads of
// rows, with one query per table.
func addConversationDetails(ctx context.Context, c conn, rows []convRow) error {
	sessions, calls := map[string]*convRow{}, map[int64]*convRow{}
	var sessionIDs, callIDs []any
	for i := range rows {
		if rows[i].callRef.Valid {
			calls[rows[i].callRef.Int64] = &rows[i]
			callIDs = append(callIDs, rows[i].callRef.Int64)
		} else {
			sessions[rows[i].ID] = &rows[i]
			sessionIDs = append(sessionIDs, rows[i].ID)
		}
	}
	if len(sessionIDs) > 0 {
		if err := addSessionDetails(ctx, c, sessions, sessionIDs); err != nil {
			return err
		}
	}
	if len(callIDs) > 0 {
		if err := addRecordings(ctx, c, calls, callIDs); err != nil {
			return err
		}
		if err := addCallDetails(ctx, c, calls, callIDs); err != nil {
			return err
		}
	}
	for i := range rows {
		r := &rows[i]
		agentline.AttachLatency(r.Transcript, r.lat, r.latAt)
		r.Latency = agentline.SummarizeLatency(r.lat)
	}
	return nil
}

func addSessionDetails(ctx context.Context, c conn, sessions map[string]*convRow, ids []any) error {
	rows, err := c.query(ctx, `SELECT session_id, type, at, data FROM session_events
		WHERE type IN ('transcript', 'tool_call', 'turn_latency') AND session_id IN (`+placeholders(len(ids))+`) ORDER BY id`, ids...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, typ, data string
		var at time.Time
		if err := rows.Scan(&id, &typ, utc(&at), &data); err != nil {
			rows.Close()
			return err
		}
		conv := sessions[id]
		if typ == agentline.EventTranscript {
			var t struct{ Role, Text string }
			json.Unmarshal([]byte(data), &t)
			conv.Transcript = append(conv.Transcript, agentline.Line{Speaker: speaker(t.Role), Text: t.Text, At: at})
		} else if typ == agentline.EventTurnLatency {
			conv.addLatency(data, at)
		} else {
			conv.ToolCalls = append(conv.ToolCalls, toolUse(data, at))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	leads, err := queryAll(ctx, c, scanLead, `SELECT `+leadColumns+` FROM leads WHERE session_id IN (`+placeholders(len(ids))+`)`, ids...)
	if err != nil {
		return err
	}
	for _, l := range leads {
		if conv := sessions[*l.SessionID]; conv != nil {
			conv.Lead = &l
		}
	}
	return nil
}

func addCallDetails(ctx context.Context, c conn, calls map[int64]*convRow, ids []any) error {
	rows, err := c.query(ctx, `SELECT call_id, type, role, text, data, at FROM call_events
		WHERE type IN ('transcript', 'tool_call', 'turn_latency') AND call_id IN (`+placeholders(len(ids))+`) ORDER BY id`, ids...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var typ, role, text string
		var data sql.NullString
		var at time.Time
		if err := rows.Scan(&id, &typ, &role, &text, &data, utc(&at)); err != nil {
			return err
		}
		conv := calls[id]
		if typ == agentline.EventTranscript {
			conv.Transcript = append(conv.Transcript, agentline.Line{Speaker: speaker(role), Text: text, At: at})
		} else if typ == agentline.EventTurnLatency {
			conv.addLatency(data.String, at)
		} else {
			conv.ToolCalls = append(conv.ToolCalls, toolUse(data.String, at))
		}
	}
	return rows.Err()
}

// speaker names the side of a transcript line: user (visitor or caller) or
// agent.
func speaker(role string) string {
	switch role {
	case "user", "caller":
		return "user"
	case "assistant", "agent":
		return "agent"
	}
	return role
}

// toolUse reads a recorded tool call: the server's record (output), or a
// client's report (output or result).
func toolUse(data string, at time.Time) agentline.ToolUse {
	var d struct {
		CallID     string          `json:"call_id"`
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Output     *string         `json:"output"`
		Result     json.RawMessage `json:"result"`
		IsError    bool            `json:"is_error"`
		DurationMS *int64          `json:"duration_ms"`
	}
	json.Unmarshal([]byte(data), &d)
	u := agentline.ToolUse{CallID: d.CallID, Name: d.Name, Arguments: d.Arguments, IsError: d.IsError, DurationMS: d.DurationMS, At: at}
	if len(u.Arguments) == 0 {
		u.Arguments = json.RawMessage(`{}`)
	}
	switch {
	case d.Output != nil:
		u.Result = *d.Output
	case len(d.Result) > 0:
		var s string
		if json.Unmarshal(d.Result, &s) != nil {
			s = string(d.Result)
		}
		u.Result = s
	}
	return u
}
