package relay_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/recording"
)

// loadRecordings records the relay load's calls in mode "recording" the
// way a live call does, through recording.Calls without the database: a
// Recorder per call writing into a spool directory, and at the call's end
// the WAV put into a directory store. Its directory is the parent's
// temporary one (RELAYLOAD_RECDIR), removed when the run ends.
type loadRecordings struct {
	calls *recording.Calls
	n     chan int // numbers the calls
}

// noRecords keeps no records: Finish is all the load calls, and
// AddRecording all that Finish asks of them.
type noRecords struct{ recording.Records }

func (noRecords) AddRecording(context.Context, agentline.CallRecording) error { return nil }

func loadRecordingsFor(mode string) (*loadRecordings, error) {
	if mode != "recording" {
		return nil, nil
	}
	dir := os.Getenv("RELAYLOAD_RECDIR")
	if dir == "" {
		return nil, fmt.Errorf("mode recording needs RELAYLOAD_RECDIR")
	}
	st, err := recording.NewDirStore(filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	calls, err := recording.NewCalls(st, noRecords{}, filepath.Join(dir, "spool"), nil)
	if err != nil {
		return nil, err
	}
	n := make(chan int, 1)
	n <- 0
	return &loadRecordings{calls: calls, n: n}, nil
}

func (l *loadRecordings) begin() *recording.Recorder {
	if l == nil {
		return nil
	}
	r, err := l.calls.Begin(time.Now())
	if err != nil {
		fmt.Fprintln(os.Stderr, "recorder:", err)
		return nil
	}
	return r
}

func (l *loadRecordings) finish(r *recording.Recorder) {
	if r == nil {
		return
	}
	i := <-l.n
	l.n <- i + 1
	if err := l.calls.Finish(context.Background(), 0, int64(i), r); err != nil {
		fmt.Fprintln(os.Stderr, "recording:", err)
	}
}
