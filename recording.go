package agentline

import (
	"strconv"
	"time"
)

// Recording statuses: stored (in the recordings store), pending (the
// upload failed and a job retries it), failed (the job gave up, or the
// recorder could not write), deleted (by retention).
const (
	RecordingStored  = "stored"
	RecordingPending = "pending"
	RecordingFailed  = "failed"
	RecordingDeleted = "deleted"
)

// RecordingContentType is the type of every recording: 8 kHz stereo WAV,
// caller left, agent right.
const RecordingContentType = "audio/wav"

// Recording is a phone conversation's recording as the API shows it. URL
// is set while the audio can be fetched (status stored).
type Recording struct {
	Status      string `json:"status"`
	DurationMS  int64  `json:"duration_ms"`
	SizeBytes   int64  `json:"size_bytes"`
	ContentType string `json:"content_type"`
	URL         string `json:"url,omitempty"`
}

// CallRecording is the record of one call's recording: where it is kept
// and in what state.
type CallRecording struct {
	CallID     int64
	ProjectID  int64
	Key        string // in the recordings store
	Status     string
	SizeBytes  int64
	DurationMS int64
	// Spool is the local file a pending recording is uploaded from.
	Spool     string
	Error     string
	CreatedAt time.Time
}

// View is the recording as conversation id shows it.
func (r CallRecording) View(conversationID string) *Recording {
	v := &Recording{Status: r.Status, DurationMS: r.DurationMS, SizeBytes: r.SizeBytes, ContentType: RecordingContentType}
	if r.Status == RecordingStored {
		v.URL = "/api/conversations/" + conversationID + "/recording"
	}
	return v
}

// RecordingKey is where a call's recording is kept in the recordings
// store: by project and conversation id, so that a listing by project
// prefix finds a project's recordings.
func RecordingKey(projectID, callID int64) string {
	return RecordingPrefix(projectID) + CallConversationID(callID) + ".wav"
}

// RecordingPrefix is the part of its recordings' keys a project owns.
func RecordingPrefix(projectID int64) string {
	return "p" + strconv.FormatInt(projectID, 10) + "/"
}

// PurgeProjectRecordings is the job, enqueued with a project's deletion,
// that deletes the project's recordings from the recordings store (the
// database rows went with the project).
type PurgeProjectRecordings struct {
	ProjectID int64 `json:"project_id"`
}

// Kind names PurgeProjectRecordings' worker.
func (PurgeProjectRecordings) Kind() string { return "purge_project_recordings" }

// UploadRecording is the job that retries putting a call's recording
// into the recordings store after the upload at the call's end failed.
type UploadRecording struct {
	ProjectID int64 `json:"project_id"`
	CallID    int64 `json:"call_id"`
}

// Kind names UploadRecording's worker.
func (UploadRecording) Kind() string { return "recording_upload" }

// SweepRecordings is the recurring job that deletes recordings older
// than their project's recording_retention_days.
type SweepRecordings struct{}

// Kind names SweepRecordings' worker.
func (SweepRecordings) Kind() string { return "sweep_recordings" }
