package recording

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
)

// Records is what call recording needs from storage: the recordings
// table.
type Records interface {
	// AddRecording records a call's recording; a pending one gets its
	// upload job in the same transaction.
	AddRecording(ctx context.Context, r agentline.CallRecording) error
	CallRecording(ctx context.Context, projectID, callID int64) (agentline.CallRecording, error)
	SetRecordingStatus(ctx context.Context, projectID, callID int64, status, why string) error
	ExpiredRecordings(ctx context.Context, now time.Time, limit int) ([]agentline.CallRecording, error)
}

// Calls records phone calls: a Recorder per call, and at the call's end
// its WAV put into the Store and recorded. Its file is written in Spool
// during the call; an upload that fails at the end stays there, pending,
// and a durable job (Uploader) retries it.
type Calls struct {
	Store   Store
	Records Records
	Spool   string
	Logger  *slog.Logger
}

// NewCalls prepares the spool directory.
func NewCalls(store Store, records Records, spool string, logger *slog.Logger) (*Calls, error) {
	if err := os.MkdirAll(spool, 0o750); err != nil {
		return nil, fmt.Errorf("recordings spool: %w", err)
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Calls{Store: store, Records: records, Spool: spool, Logger: logger}, nil
}

// Begin starts recording one call, whose stream started at start (on
// the wall clock: time.Now's).
func (c *Calls) Begin(start time.Time) (*Recorder, error) {
	return New(Options{Dir: c.Spool, Start: start})
}

// Finish closes the call's recorder, puts the WAV into the store under the
// call's key and records it: stored, or pending (its upload job retries)
// when the store failed, or failed when the recorder could not write.
func (c *Calls) Finish(ctx context.Context, projectID, callID int64, r *Recorder) error {
	row := agentline.CallRecording{CallID: callID, ProjectID: projectID, Key: agentline.RecordingKey(projectID, callID), Status: agentline.RecordingStored}
	res, err := r.Close(ctx)
	if err != nil {
		row.Status, row.Error = agentline.RecordingFailed, err.Error()
		return errors.Join(fmt.Errorf("recording of call %d: %w", callID, err), c.Records.AddRecording(context.WithoutCancel(ctx), row))
	}
	row.SizeBytes, row.DurationMS = res.Bytes, res.Duration.Milliseconds()
	if res.Gaps > 0 || res.Lost > 0 {
		c.Logger.Warn("the recording has gaps: the writer fell behind", "call_id", callID, "gaps", res.Gaps,
			"dropped_caller_frames", res.DroppedCallerFrames, "dropped_agent_bytes", res.DroppedAgentBytes)
	}
	if err := res.Save(ctx, c.Store, row.Key); err != nil {
		c.Logger.Warn("could not store the call's recording; retrying in the background", "call_id", callID, "err", err)
		row.Status, row.Spool, row.Error = agentline.RecordingPending, res.Path, err.Error()
	}
	if err := c.Records.AddRecording(context.WithoutCancel(ctx), row); err != nil {
		return fmt.Errorf("record the recording of call %d: %w", callID, err)
	}
	return nil
}

// Delete removes the recording of a call from the store, and a pending
// one's spool file (when this instance has it), if there is one.
func (c *Calls) Delete(ctx context.Context, projectID, callID int64) error {
	rec, err := c.Records.CallRecording(ctx, projectID, callID)
	if err != nil && !errors.Is(err, agentline.ErrNotFound) {
		return err
	}
	if rec.Spool != "" {
		if err := (Result{Path: rec.Spool}).Remove(); err != nil {
			return err
		}
	}
	return c.Store.Delete(ctx, agentline.RecordingKey(projectID, callID))
}

// Purger is the worker of PurgeProjectRecordings jobs: it deletes a
// deleted project's objects from the store. Calls is nil when this
// instance has no recordings store (telephony off); then there is
// nothing it could delete.
type Purger struct {
	river.WorkerDefaults[agentline.PurgeProjectRecordings]
	Calls *Calls
}

// Work deletes every object under the project's prefix.
func (p *Purger) Work(ctx context.Context, job *river.Job[agentline.PurgeProjectRecordings]) error {
	if p.Calls == nil {
		return nil
	}
	objects, err := p.Calls.Store.List(ctx, agentline.RecordingPrefix(job.Args.ProjectID))
	if err != nil {
		return fmt.Errorf("purge project %d recordings: %w", job.Args.ProjectID, err)
	}
	for _, o := range objects {
		if err := p.Calls.Store.Delete(ctx, o.Key); err != nil {
			return fmt.Errorf("purge project %d recordings: %w", job.Args.ProjectID, err)
		}
	}
	p.Calls.Logger.Info("deleted a deleted project's recordings", "project_id", job.Args.ProjectID, "count", len(objects))
	return nil
}

// Uploader is the worker of UploadRecording jobs: it puts a pending
// recording's spool file into the store. The file is on the instance that
// recorded the call; an instance that does not have it fails the attempt,
// so that a later attempt (maybe there) tries again.
type Uploader struct {
	river.WorkerDefaults[agentline.UploadRecording]
	Calls *Calls
	// MaxAttempts is how many tries the job gets before the recording is
	// marked failed.
	MaxAttempts int
}

// NextRetry spaces the attempts 2, 4, 8 s ... apart, at most an hour:
// a store that was down for a moment gets the recording soon after.
func (u *Uploader) NextRetry(job *river.Job[agentline.UploadRecording]) time.Time {
	return time.Now().Add(min(time.Second<<min(job.Attempt, 12), time.Hour))
}

// Work makes one attempt.
func (u *Uploader) Work(ctx context.Context, job *river.Job[agentline.UploadRecording]) error {
	a := job.Args
	rec, err := u.Calls.Records.CallRecording(ctx, a.ProjectID, a.CallID)
	if errors.Is(err, agentline.ErrNotFound) {
		return nil // deleted with its conversation meanwhile
	}
	if err != nil {
		return err
	}
	if rec.Status != agentline.RecordingPending {
		return nil
	}
	err = Result{Path: rec.Spool}.Save(ctx, u.Calls.Store, rec.Key)
	if err == nil {
		return u.Calls.Records.SetRecordingStatus(ctx, a.ProjectID, a.CallID, agentline.RecordingStored, "")
	}
	if job.Attempt >= u.MaxAttempts {
		u.Calls.Logger.Error("gave up storing a call's recording", "call_id", a.CallID, "attempts", job.Attempt, "err", err)
		return u.Calls.Records.SetRecordingStatus(ctx, a.ProjectID, a.CallID, agentline.RecordingFailed, err.Error())
	}
	return err
}

// Retention is the worker of the recurring SweepRecordings job: it deletes
// from the store the recordings older than their project's
// recording_retention_days, and marks them deleted.
type Retention struct {
	river.WorkerDefaults[agentline.SweepRecordings]
	Calls *Calls
	Now   func() time.Time
}

// RetentionInterval is how often retention runs (and once at start).
const RetentionInterval = time.Hour

// Work runs one sweep.
func (s *Retention) Work(ctx context.Context, _ *river.Job[agentline.SweepRecordings]) error {
	_, err := s.Sweep(ctx)
	return err
}

// Sweep deletes what has expired now, in batches, and says how many.
func (s *Retention) Sweep(ctx context.Context) (int, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	n := 0
	for {
		list, err := s.Calls.Records.ExpiredRecordings(ctx, now().UTC(), 200)
		if err != nil || len(list) == 0 {
			return n, err
		}
		for _, r := range list {
			if err := s.Calls.Store.Delete(ctx, r.Key); err != nil {
				return n, fmt.Errorf("retention: %w", err)
			}
			if err := s.Calls.Records.SetRecordingStatus(ctx, r.ProjectID, r.CallID, agentline.RecordingDeleted, ""); err != nil {
				return n, fmt.Errorf("retention: %w", err)
			}
			n++
		}
		s.Calls.Logger.Info("deleted recordings past their project's retention", "count", len(list))
	}
}

// Serve answers a GET or HEAD with the recording of the project's call
// (Range honoured); not found unless it is stored.
func (c *Calls) Serve(w http.ResponseWriter, r *http.Request, projectID, callID int64) error {
	rec, err := c.Records.CallRecording(r.Context(), projectID, callID)
	if err != nil {
		return err
	}
	if rec.Status != agentline.RecordingStored {
		return agentline.NotFound("recording")
	}
	return Serve(w, r, c.Store, rec.Key)
}
