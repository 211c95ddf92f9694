package livecall

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// callLog writes a call's events to its record while the call goes on, so
// an instance that dies mid-call keeps what was said until then. The relay
// hands events to add from its goroutines, which never wait on the
// database: add appends to a pending batch (bounded by maxCallLog) and
// wakes the call's own writer goroutine, which stores whatever is pending
// in one transaction per wake.
type callLog struct {
	write func(context.Context, []agentline.CallLogEntry) error
	log   *slog.Logger

	mu      sync.Mutex
	pending []agentline.CallLogEntry
	kept    int           // entries accepted, written or not
	spoke   bool          // an accepted entry is the caller's speech
	wake    chan struct{} // capacity 1: a wake-up is pending
	stopped chan struct{}
	done    chan struct{}
}

// maxCallLog bounds the entries kept of one call.
const maxCallLog = 10000

// startCallLog starts the writer of one call's log.
func (h *Handler) startCallLog(sc *streamCall, log *slog.Logger) *callLog {
	l := &callLog{
		write: func(ctx context.Context, entries []agentline.CallLogEntry) error {
			return h.store.AppendCallLog(ctx, sc.call.ProjectID, sc.call.ID, entries)
		},
		log: log, wake: make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{}),
	}
	go l.run()
	return l
}

func (l *callLog) add(e relay.Event) {
	entry := agentline.CallLogEntry{Type: e.Type, Role: e.Role, Text: e.Text, At: e.At.UTC()}
	if e.Call != nil {
		data := struct {
			Name      string          `json:"name"`
			CallID    string          `json:"call_id"`
			Arguments json.RawMessage `json:"arguments"`
			Output    string          `json:"output,omitempty"`
			IsError   bool            `json:"is_error,omitempty"`
		}{Name: e.Call.Name, CallID: e.Call.CallID, Arguments: e.Call.Arguments}
		if e.Result != nil {
			data.Output, data.IsError = e.Result.Output, e.Result.IsError
		}
		entry.Data, _ = json.Marshal(data)
		entry.Text = e.Call.Name
	}
	if e.Type == agentline.EventTurnLatency {
		entry.Data = strconv.AppendInt([]byte(`{"latency_ms":`), e.Latency.Milliseconds(), 10)
		entry.Data = append(entry.Data, '}')
	}
	l.mu.Lock()
	if l.kept < maxCallLog {
		l.kept++
		l.pending = append(l.pending, entry)
		l.spoke = l.spoke || entry.CallerSpeech()
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // the writer is already due to run
	}
}

// run stores pending entries on each wake-up until stop. A batch that could
// not be stored stays pending for the next try (and, last, for the call's
// end record).
func (l *callLog) run() {
	defer close(l.done)
	for {
		select {
		case <-l.wake:
		case <-l.stopped:
			return
		}
		batch := l.take()
		if len(batch) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := l.write(ctx, batch)
		cancel()
		if err != nil {
			l.log.Warn("could not store call events yet; keeping them for the next write", "err", err, "events", len(batch))
			l.mu.Lock()
			l.pending = append(batch, l.pending...)
			l.mu.Unlock()
		}
	}
}

func (l *callLog) take() []agentline.CallLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.pending
	l.pending = nil
	return out
}

// stop ends the writer and returns the entries not stored yet, which go
// with the call's end record in its transaction, and whether the caller
// said anything in the whole call (what its analysis needs to know).
func (l *callLog) stop() (rest []agentline.CallLogEntry, spoke bool) {
	close(l.stopped)
	<-l.done
	rest = l.take()
	l.mu.Lock()
	defer l.mu.Unlock()
	return rest, l.spoke
}
