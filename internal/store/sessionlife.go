package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func insertSessionEvent(ctx context.Context, c conn, sessionID string, e agentline.SessionEvent) error {
	data := string(e.Data)
	if data == "" || data == "null" {
		data = "{}"
	}
	if _, err := c.exec(ctx, `INSERT INTO session_events (session_id, type, at, data) VALUES (?, ?, ?, ?)`,
		sessionID, e.Type, e.At.UTC(), data); err != nil {
		return fmt.Errorf("add session event: %w", err)
	}
	return nil
}

// endReason is session_ended's data.reason, or "ended".
func endReason(data json.RawMessage) string {
	var d struct {
		Reason string `json:"reason"`
	}
	json.Unmarshal(data, &d)
	if d.Reason == "" || len(d.Reason) > 100 {
		return agentline.EndReasonEnded
	}
	return d.Reason
}

// endSession marks a live session ended at the time, with its duration.
func endSession(ctx context.Context, c conn, sessionID string, started, at time.Time, reason string) error {
	dur := max(at.Sub(started).Milliseconds(), 0)
	_, err := c.exec(ctx, `UPDATE widget_sessions SET ended_at = ?, duration_ms = ?, status = ?, end_reason = ? WHERE id = ?`,
		at, dur, agentline.ConversationEnded, reason, sessionID)
	return err
}

// sweepLimit bounds the sessions one sweep ends; the next sweep takes the
// rest.
const sweepLimit = 500

// AbandonIdleSessions ends the live widget sessions of every project that
// are over as abandoned: a connected session with no event since
// idleBefore, at its last event seen (its start when it reported none),
// with the duration up to it; a live chat session created before
// connectBefore that never connected. Each is its own transaction, in which
// ended follows the end. It returns how many it ended.
func (db *DB) AbandonIdleSessions(ctx context.Context, idleBefore, connectBefore time.Time, ended agentline.ConversationFollowUp) (int, error) {
	type idle struct {
		id        string
		projectID int64
		reason    string
	}
	rows, err := db.reader().query(ctx, `SELECT id, project_id, provider FROM widget_sessions WHERE status = 'live'
		AND ((provider <> '' AND coalesce(last_event_at, started_at) < ?) OR (provider = '' AND started_at < ?))
		ORDER BY started_at LIMIT ?`, idleBefore.UTC(), connectBefore.UTC(), sweepLimit)
	if err != nil {
		return 0, fmt.Errorf("find idle sessions: %w", err)
	}
	var found []idle
	for rows.Next() {
		var s idle
		var provider string
		if err := rows.Scan(&s.id, &s.projectID, &provider); err != nil {
			rows.Close()
			return 0, err
		}
		s.reason = agentline.EndReasonIdleTimeout
		if provider == "" {
			s.reason = agentline.EndReasonNeverConnected
		}
		found = append(found, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, s := range found {
		ok, err := db.abandonSession(ctx, s.projectID, s.id, s.reason, ended)
		if err != nil {
			return n, fmt.Errorf("abandon session %s: %w", s.id, err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// abandonSession ends one session as abandoned, unless it ended meanwhile,
// and runs then after that end.
func (db *DB) abandonSession(ctx context.Context, projectID int64, id, reason string, then agentline.ConversationFollowUp) (bool, error) {
	ended := false
	err := db.tx(ctx, func(c conn) error {
		var started, last time.Time
		var okLast bool
		err := c.queryRow(ctx, `SELECT started_at, last_event_at FROM widget_sessions WHERE id = ? AND status = 'live'`, id).
			Scan(utc(&started), anyTime{&last, &okLast})
		if err != nil {
			return ignoreNoRows(err)
		}
		at := started
		if okLast && last.After(started) {
			at = last
		}
		// Only a session still live: a client's end (or another sweep) that
		// committed meanwhile wins, and nothing follows a second time.
		res, err := c.exec(ctx, `UPDATE widget_sessions SET status = ?, end_reason = ?, ended_at = ?, duration_ms = ? WHERE id = ? AND status = 'live'`,
			agentline.ConversationAbandoned, reason, at, at.Sub(started).Milliseconds(), id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		ended = true
		return db.followConversation(ctx, c, then, projectID, id)
	})
	return ended, err
}

// ignoreNoRows is nil for sql.ErrNoRows: a row that is gone needs no work.
func ignoreNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}
