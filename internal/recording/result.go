package recording

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Result describes a finished recording. The counts say how faithful it is:
// anything dropped is silence in the file, never a shift of what follows.
type Result struct {
	// Path is the finished WAV, a temporary file: Save moves it to a Store,
	// Remove discards it.
	Path     string
	Bytes    int64         // size of the file
	Duration time.Duration // the line time when the call ended

	CallerFrames int64 // caller frames recorded on the left
	// AgentBytes is the agent audio the writer got, in samples; Cuts and
	// Unplayed say how much of it the caller did not hear.
	AgentBytes int64

	// Audio the writer never got because it fell behind (buffer full).
	DroppedCallerFrames int64
	DroppedAgentBytes   int64
	Gaps                int64 // runs of dropped audio, per side
	// Lost counts clears and gaps that did not fit either: the agent
	// channel may then be misplaced or keep audio a clear cut.
	Lost int64

	Rejected    int64 // payloads not base64, timestamps negative or past MaxDuration
	LateSamples int64 // caller samples that came after their place was written

	// Cuts are the barge-ins that dropped queued agent audio (the first
	// 1024; ClearCuts counts all).
	Cuts      []Cut
	ClearCuts int64
	// Unplayed is the agent audio still queued at the carrier when the call
	// ended: never heard, so not recorded.
	Unplayed time.Duration
}

// Cut is a barge-in: at At the carrier dropped Dropped of agent audio.
type Cut struct {
	At, Dropped time.Duration
}

// Save puts the file into s under key and removes it. On failure the file
// stays, so that the upload can be retried.
func (r Result) Save(ctx context.Context, s Store, key string) error {
	f, err := os.Open(r.Path)
	if err != nil {
		return fmt.Errorf("open recording: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat recording: %w", err)
	}
	if err := s.Put(ctx, key, f, fi.Size()); err != nil {
		return fmt.Errorf("save recording %s: %w", key, err)
	}
	return r.Remove()
}

// Remove deletes the temporary file.
func (r Result) Remove() error {
	if err := os.Remove(r.Path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove recording file: %w", err)
	}
	return nil
}
