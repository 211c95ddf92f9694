package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
)

// pollingListener stands for River's SQLite listener: each call reads the
// table (a notification when one is queued) and otherwise polls until its
// context ends. It reports each call's window.
type pollingListener struct {
	riverdriver.Listener
	calls   chan time.Duration
	pending chan *riverdriver.Notification
}

func (p *pollingListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	window := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		window = time.Until(d)
	}
	p.calls <- window
	select {
	case n := <-p.pending:
		return n, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func newPolling() (*quietListener, *pollingListener) {
	p := &pollingListener{calls: make(chan time.Duration, 16), pending: make(chan *riverdriver.Notification, 1)}
	return &quietListener{Listener: p, quiet: time.Hour, wake: make(chan struct{}, 1)}, p
}

// Quiet, the listener reads the table once per quiet interval, in a short
// window; an insert here puts it back at River's pace at once, for
// activeFor, and the notification it then finds is returned.
func TestQuietListenerFollowsInserts(t *testing.T) {
	l, p := newPolling()
	got := make(chan *riverdriver.Notification, 1)
	errs := make(chan error, 1)
	go func() {
		n, err := l.WaitForNotification(context.Background())
		got <- n
		errs <- err
	}()
	if w := <-p.calls; w <= 0 || w > quietProbe {
		t.Fatalf("quiet read window %v, want at most %v", w, quietProbe)
	}
	select {
	case w := <-p.calls:
		t.Fatalf("a second read (%v) before the quiet interval or an insert", w)
	case <-time.After(100 * time.Millisecond):
	}
	p.pending <- &riverdriver.Notification{Topic: "river_insert", Payload: "{}"}
	l.inserted()
	if w := <-p.calls; w < activeFor/2 {
		t.Fatalf("read window after an insert %v, want about %v", w, activeFor)
	}
	if n, err := <-got, <-errs; err != nil || n == nil || n.Topic != "river_insert" {
		t.Fatalf("got %+v, %v", n, err)
	}
}

// The caller's context ends the wait, quiet or not, and the wrapped
// listener's own errors pass through.
func TestQuietListenerEnds(t *testing.T) {
	l, p := newPolling()
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() {
		_, err := l.WaitForNotification(ctx)
		errs <- err
	}()
	<-p.calls
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}

	boom := errors.New("listener is not connected")
	l.Listener = failingListener{err: boom}
	if _, err := l.WaitForNotification(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the listener's", err)
	}
}

type failingListener struct {
	riverdriver.Listener
	err error
}

func (f failingListener) WaitForNotification(context.Context) (*riverdriver.Notification, error) {
	return nil, f.err
}
