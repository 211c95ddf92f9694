package app

import (
	"path/filepath"

	"github.com/agentline/agentline/internal/recording"
	"github.com/agentline/agentline/internal/telephony/livecall"
)

// callRecordings is a.recordings as the phone channel takes it: a nil
// interface, not a typed nil, when there are none.
func (a *App) callRecordings() livecall.Recordings {
	if a.recordings == nil {
		return nil
	}
	return a.recordings
}

// openRecordings opens the recordings store (AGENTLINE_RECORDINGS_URL's
// bucket, else the directory) when calls can be taken: with the phone
// channel or the sandbox on. Recordings are written during the call into
// the directory's .spool, where a failed upload also waits for its retry.
func (a *App) openRecordings() error {
	if !a.Config.TelephonyEnabled && !a.Config.Sandbox {
		return nil
	}
	dir := a.Config.RecordingsDirectory()
	// config keeps the bucket's credentials as plain values, field for
	// field recording's own.
	st, err := recording.OpenStore(a.Config.RecordingsURL, dir, recording.Credentials(a.Config.RecordingsCredentials))
	if err != nil {
		return err
	}
	calls, err := recording.NewCalls(st, a.Store, filepath.Join(dir, ".spool"), a.Logger)
	if err != nil {
		return err
	}
	a.recordings = calls
	return nil
}
