package livecall

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// TestCallLogWriter: events handed to a call's log are written in batches
// by its own goroutine; a batch whose write fails is kept and written with
// the next; what is still unwritten at the end is returned for the end
// record; nothing is lost or written twice.
func TestCallLogWriter(t *testing.T) {
	var mu sync.Mutex
	var stored []string
	fail := true
	wrote := make(chan struct{}, 100)
	l := &callLog{
		write: func(ctx context.Context, entries []agentline.CallLogEntry) error {
			defer func() { wrote <- struct{}{} }()
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return errors.New("database is down")
			}
			for _, e := range entries {
				stored = append(stored, e.Text)
			}
			return nil
		},
		log:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		wake: make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{}),
	}
	go l.run()
	at := time.Now()
	l.add(relay.Event{Type: "transcript", Role: "caller", Text: "one", At: at})
	<-wrote // failed: kept
	mu.Lock()
	fail = false
	mu.Unlock()
	l.add(relay.Event{Type: "transcript", Role: "agent", Text: "two", At: at})
	for {
		<-wrote
		mu.Lock()
		n := len(stored)
		mu.Unlock()
		if n == 2 {
			break
		}
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	l.add(relay.Event{Type: "dtmf", Text: "three", At: at})
	<-wrote // failed again
	left := l.stop()
	if len(stored) != 2 || stored[0] != "one" || stored[1] != "two" || len(left) != 1 || left[0].Text != "three" {
		t.Fatalf("stored %q, left for the end record %+v", stored, left)
	}
}
