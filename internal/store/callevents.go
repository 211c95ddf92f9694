package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentline/agentline"
)

// insertCallLog appends entries to a call's log (ApplyCallEvent's Log).
func insertCallLog(ctx context.Context, c conn, callID int64, entries []agentline.CallLogEntry) error {
	for _, e := range entries {
		var data any
		if len(e.Data) > 0 {
			data = string(e.Data)
		}
		if _, err := c.exec(ctx, `INSERT INTO call_events (call_id, type, role, text, data, at) VALUES (?, ?, ?, ?, ?, ?)`,
			callID, e.Type, e.Role, e.Text, data, e.At.UTC()); err != nil {
			return fmt.Errorf("add call log: %w", err)
		}
	}
	return nil
}

// AppendCallLog adds entries to the log of one of the project's calls, in
// one transaction; a call of another project is not found.
func (db *DB) AppendCallLog(ctx context.Context, projectID, callID int64, entries []agentline.CallLogEntry) error {
	return db.tx(ctx, func(c conn) error {
		var one int
		if err := c.queryRow(ctx, `SELECT 1 FROM calls WHERE id = ? AND project_id = ?`, callID, projectID).Scan(&one); err != nil {
			return notFound(err, "call")
		}
		return insertCallLog(ctx, c, callID, entries)
	})
}

// CallLog returns a call's log, oldest first.
func (db *DB) CallLog(ctx context.Context, projectID, callID int64) ([]agentline.CallLogEntry, error) {
	rows, err := db.reader().query(ctx,
		`SELECT e.type, e.role, e.text, e.data, e.at FROM call_events e JOIN calls c ON c.id = e.call_id
		 WHERE c.project_id = ? AND e.call_id = ? ORDER BY e.id`, projectID, callID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []agentline.CallLogEntry{}
	for rows.Next() {
		var e agentline.CallLogEntry
		var data sql.NullString
		if err := rows.Scan(&e.Type, &e.Role, &e.Text, &data, utc(&e.At)); err != nil {
			return nil, err
		}
		if data.Valid {
			e.Data = []byte(data.String)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// unchangedBy reports whether applying e, which carries no log, would
// leave call as it is (but for its updated_at): the call has ended, so its
// status cannot move, and it has the duration and end reason e would give
// it. Those are only ever set once, so a call read outside the
// transaction that shows them still has them.
func unchangedBy(call agentline.Call, e agentline.CallEvent) bool {
	return agentline.CallStatusFinal(call.Status) && !agentline.CallStatusAdvances(call.Status, e.Status) &&
		(e.AnsweredBy == "" || call.AnsweredBy != "") &&
		(call.DurationS != nil || e.DurationS == nil) &&
		(e.EndReason == "" || call.EndReason != "" && call.EndReason != agentline.EndReasonReconciled)
}
