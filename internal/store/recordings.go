package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

const recordingColumns = `call_id, project_id, key, status, size_bytes, duration_ms, spool, error, created_at`

func scanRecording(s interface{ Scan(...any) error }) (agentline.CallRecording, error) {
	var r agentline.CallRecording
	err := s.Scan(&r.CallID, &r.ProjectID, &r.Key, &r.Status, &r.SizeBytes, &r.DurationMS, &r.Spool, &r.Error, utc(&r.CreatedAt))
	return r, err
}

// AddRecording records a call's recording. A pending one gets its upload
// job in the same transaction, so that it is retried even if this
// instance stops right after.
func (db *DB) AddRecording(ctx context.Context, r agentline.CallRecording) error {
	now := db.now()
	return db.tx(ctx, func(c conn) error {
		_, err := c.exec(ctx, `INSERT INTO recordings (call_id, project_id, key, status, size_bytes, duration_ms, spool, error, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.CallID, r.ProjectID, r.Key, r.Status, r.SizeBytes, r.DurationMS, r.Spool, r.Error, now, now)
		if err != nil {
			return fmt.Errorf("add recording of call %d: %w", r.CallID, err)
		}
		if r.Status != agentline.RecordingPending {
			return nil
		}
		return db.outboxOn(c).Enqueue(ctx, agentline.UploadRecording{ProjectID: r.ProjectID, CallID: r.CallID})
	})
}

// CallRecording returns the recording of the project's call.
func (db *DB) CallRecording(ctx context.Context, projectID, callID int64) (agentline.CallRecording, error) {
	r, err := scanRecording(db.reader().queryRow(ctx, `SELECT `+recordingColumns+` FROM recordings WHERE project_id = ? AND call_id = ?`, projectID, callID))
	return r, notFound(err, "recording")
}

// SetRecordingStatus moves a recording out of pending (stored, failed)
// or out of the store (deleted), with why for failed; its spool file is
// gone by then.
func (db *DB) SetRecordingStatus(ctx context.Context, projectID, callID int64, status, why string) error {
	res, err := db.writer().exec(ctx, `UPDATE recordings SET status = ?, error = ?, spool = '', updated_at = ?
		WHERE project_id = ? AND call_id = ?`, status, why, db.now(), projectID, callID)
	return mustAffect(res, err, "recording")
}

// ExpiredRecordings lists up to limit stored recordings that are older
// than their project's recording_retention_days at now (0 keeps them).
func (db *DB) ExpiredRecordings(ctx context.Context, now time.Time, limit int) ([]agentline.CallRecording, error) {
	type keep struct {
		project int64
		days    int
	}
	projects, err := queryAll(ctx, db.reader(), func(s interface{ Scan(...any) error }) (keep, error) {
		var k keep
		return k, s.Scan(&k.project, &k.days)
	}, `SELECT id, recording_retention_days FROM projects WHERE recording_retention_days > 0 ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("expired recordings: %w", err)
	}
	out := []agentline.CallRecording{}
	for _, p := range projects {
		cutoff := now.Add(-time.Duration(p.days) * 24 * time.Hour)
		list, err := queryAll(ctx, db.reader(), scanRecording, `SELECT `+recordingColumns+` FROM recordings
			WHERE project_id = ? AND status = ? AND created_at < ? ORDER BY created_at LIMIT ?`,
			p.project, agentline.RecordingStored, cutoff, limit-len(out))
		if err != nil {
			return nil, fmt.Errorf("expired recordings: %w", err)
		}
		if out = append(out, list...); len(out) >= limit {
			break
		}
	}
	return out, nil
}

// addRecordings fills in the recordings of call conversations.
func addRecordings(ctx context.Context, c conn, calls map[int64]*convRow, ids []any) error {
	list, err := queryAll(ctx, c, scanRecording, `SELECT `+recordingColumns+` FROM recordings WHERE call_id IN (`+placeholders(len(ids))+`)`, ids...)
	if err != nil {
		return err
	}
	for _, r := range list {
		if conv := calls[r.CallID]; conv != nil {
			conv.Recording = r.View(conv.ID)
		}
	}
	return nil
}
