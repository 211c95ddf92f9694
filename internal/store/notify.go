package store

import (
	"context"
	"fmt"

	"github.com/agentline/agentline"
)

const notifyColumns = `id, project_id, channel_id, lead_id, attempt, max_attempts, delivered, status_code, error, latency_ms, at`

func scanNotifyAttempt(row interface{ Scan(...any) error }) (agentline.NotifyAttempt, error) {
	var a agentline.NotifyAttempt
	err := row.Scan(&a.ID, &a.ProjectID, &a.ChannelID, &a.LeadID, &a.Attempt, &a.MaxAttempts, &a.Delivered,
		&a.StatusCode, &a.Error, &a.LatencyMS, utc(&a.At))
	return a, err
}

// RecordNotifyAttempt keeps one try at POSTing a lead to its form's
// notify_url. A try for a lead deleted meanwhile has nothing to belong to
// and is dropped without an error: the delivery itself went on regardless.
func (db *DB) RecordNotifyAttempt(ctx context.Context, a agentline.NotifyAttempt) error {
	_, err := db.writer().exec(ctx, `INSERT INTO notify_attempts (project_id, channel_id, lead_id, attempt, max_attempts,
		delivered, status_code, error, latency_ms, at) SELECT project_id, channel_id, id, ?, ?, ?, ?, ?, ?, ?
		FROM leads WHERE project_id = ? AND id = ?`,
		a.Attempt, a.MaxAttempts, a.Delivered, a.StatusCode, a.Error, a.LatencyMS, a.At.UTC(), a.ProjectID, a.LeadID)
	if isForeignKeyViolation(err) {
		return nil // the lead went between the SELECT and the INSERT
	}
	if err != nil {
		return fmt.Errorf("record notify attempt of lead %d: %w", a.LeadID, err)
	}
	return nil
}

// NotifyAttempts lists the latest limit tries at the notify_url deliveries
// of a form channel of the project, newest first: those older than the
// attempt before, when it is not 0.
func (db *DB) NotifyAttempts(ctx context.Context, projectID, channelID, before int64, limit int) ([]agentline.NotifyAttempt, error) {
	return queryAll(ctx, db.reader(), scanNotifyAttempt, `SELECT `+notifyColumns+` FROM notify_attempts
		WHERE project_id = ? AND channel_id = ? AND (? = 0 OR id < ?) ORDER BY id DESC LIMIT ?`, projectID, channelID, before, before, limit)
}
