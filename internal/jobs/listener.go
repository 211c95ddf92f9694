package jobs

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river/riverdriver"
)

// River's SQLite driver has no LISTEN: its listener reads River's
// notification table every 50 ms, which was about a third of an idle
// instance's CPU. On SQLite one process owns the database (docs/deploy.md),
// so every job insert that notifies goes through this Queue (EnqueueTx,
// Enqueue) or River's own maintenance. quietDriver hands River a listener
// that reads at River's pace only for activeFor after such an insert (its
// transaction commits within that, and the notification is read within
// 50 ms as before), and otherwise once per quiet interval: a notification
// no insert here announced (River's scheduler making retries due, its
// leadership and queue control) waits at most that long, and the producer
// polls for due jobs at the same interval anyway (FetchPollInterval).
type quietDriver struct {
	riverdriver.Driver[*sql.Tx]
	listener *quietListener
}

// activeFor is how long after an insert the listener keeps River's pace.
const activeFor = 2 * time.Second

// quietProbe bounds one read of the notification table in quiet mode: the
// wrapped listener reads once, then waits for its next poll, which this
// ends.
const quietProbe = 20 * time.Millisecond

func newQuietDriver(d riverdriver.Driver[*sql.Tx], quiet time.Duration) *quietDriver {
	return &quietDriver{Driver: d, listener: &quietListener{quiet: quiet, wake: make(chan struct{}, 1)}}
}

// GetListener wraps the driver's listener (River asks once per client).
func (d *quietDriver) GetListener(params *riverdriver.GetListenenerParams) riverdriver.Listener {
	d.listener.Listener = d.Driver.GetListener(params)
	return d.listener
}

// quietListener is River's SQLite listener, read at its pace while jobs
// are being inserted here and seldom otherwise.
type quietListener struct {
	riverdriver.Listener
	quiet       time.Duration
	wake        chan struct{} // a token when an insert happened since the last look
	activeUntil atomic.Int64  // unix nanoseconds
}

// inserted announces a job insert whose notification is on its way.
func (l *quietListener) inserted() {
	l.activeUntil.Store(time.Now().Add(activeFor).UnixNano())
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// WaitForNotification reads as the wrapped listener does (every 50 ms)
// until activeUntil, then once per quiet interval or at the next insert.
func (l *quietListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	for {
		n, err := l.read(ctx, max(l.activeLeft(), quietProbe))
		if n != nil || err != nil {
			return n, err
		}
		if l.activeLeft() > 0 {
			continue // an insert came while reading
		}
		t := time.NewTimer(l.quiet)
		select {
		case <-ctx.Done():
		case <-l.wake:
		case <-t.C:
		}
		t.Stop()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// activeLeft is how long the listener keeps River's pace still.
func (l *quietListener) activeLeft() time.Duration {
	return time.Duration(l.activeUntil.Load() - time.Now().UnixNano())
}

// read waits at most window for a notification; nil, nil when none came.
func (l *quietListener) read(ctx context.Context, window time.Duration) (*riverdriver.Notification, error) {
	rctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	n, err := l.Listener.WaitForNotification(rctx)
	if err == nil || ctx.Err() != nil {
		return n, err
	}
	if errors.Is(err, context.DeadlineExceeded) && rctx.Err() != nil {
		return nil, nil
	}
	return nil, err
}
