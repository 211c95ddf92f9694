package relay_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentline/agentline/internal/recording"
)

// loadRecordings records the relay load's calls in mode "recording" the
// way a live call does (recording.Calls' path without the database): a
// Recorder per call writing into a spool directory, and at the call's end
// the WAV put into a directory store. Its temporary directory is removed
// is the parent's (RELAYLOAD_RECDIR), removed when the run ends.
type loadRecordings struct {
	store recording.Store
	spool string
	n     chan int // numbers the calls' keys
}

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
	spool := filepath.Join(dir, "spool")
	if err := os.MkdirAll(spool, 0o750); err != nil {
		return nil, err
	}
	n := make(chan int, 1)
	n <- 0
	return &loadRecordings{store: st, spool: spool, n: n}, nil
}

func (l *loadRecordings) begin() *recording.Recorder {
	if l == nil {
		return nil
	}
	r, err := recording.New(recording.Options{Dir: l.spool})
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
	res, err := r.Close(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "recording:", err)
		return
	}
	if res.Gaps > 0 {
		fmt.Fprintf(os.Stderr, "recording with %d gaps (writer behind)\n", res.Gaps)
	}
	i := <-l.n
	l.n <- i + 1
	if err := res.Save(context.Background(), l.store, fmt.Sprintf("calls/%d.wav", i)); err != nil {
		fmt.Fprintln(os.Stderr, "save recording:", err)
	}
}
