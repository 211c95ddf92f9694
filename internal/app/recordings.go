package app

import (
	"path/filepath"

	"github.com/agentline/agentline/internal/recording"
)

// openRecordings opens the recordings store (AGENTLINE_RECORDINGS_URL's
// bucket, else the directory) when calls can be taken: with the phone
// channel or the sandbox on; nil otherwise. Recordings are written during
// the call into the directory's .spool, where a failed upload also waits
// for its retry.
func (a *App) openRecordings() (*recording.Calls, error) {
	if !a.Config.TelephonyEnabled && !a.Config.Sandbox {
		return nil, nil
	}
	dir := a.Config.RecordingsDirectory()
	// config keeps the bucket's credentials as plain values, field for
	// field recording's own.
	st, err := recording.OpenStore(a.Config.RecordingsURL, dir, recording.Credentials(a.Config.RecordingsCredentials))
	if err != nil {
		return nil, err
	}
	return recording.NewCalls(st, a.Store, filepath.Join(dir, ".spool"), a.logger)
}
