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
	left, spoke := l.stop()
	if len(stored) != 2 || stored[0] != "one" || stored[1] != "two" || len(left) != 1 || left[0].Text != "three" {
		t.Fatalf("stored %q, left for the end record %+v", stored, left)
	}
	if !spoke {
		t.Error("the caller said \"one\", but the log says they never spoke")
	}
}

// A call's log says the caller spoke only for a caller's transcript line
// with words in it: the agent's lines, a blank caller line, keypresses and
// tool calls leave its analysis to be skipped.
func TestCallLogKnowsWhetherTheCallerSpoke(t *testing.T) {
	at := time.Now()
	for _, c := range []struct {
		events []relay.Event
		spoke  bool
	}{
		{nil, false},
		{[]relay.Event{{Type: "transcript", Role: "agent", Text: "Hello, how can I help?", At: at},
			{Type: "transcript", Role: "caller", Text: "  ", At: at}, {Type: "dtmf", Text: "5", At: at}}, false},
		{[]relay.Event{{Type: "transcript", Role: "agent", Text: "Hello", At: at}, {Type: "transcript", Role: "caller", Text: "Hi", At: at}}, true},
		{[]relay.Event{{Type: "transcript", Role: "user", Text: "Hi", At: at}}, true},
	} {
		l := &callLog{write: func(context.Context, []agentline.CallLogEntry) error { return nil },
			log: slog.New(slog.NewTextHandler(io.Discard, nil)), wake: make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{})}
		go l.run()
		for _, e := range c.events {
			l.add(e)
		}
		if _, spoke := l.stop(); spoke != c.spoke {
			t.Errorf("%+v: spoke = %v, want %v", c.events, spoke, c.spoke)
		}
	}
}
