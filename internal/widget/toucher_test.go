package widget

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// stop waits for a write in flight; one that outlasts stop's context is
// cancelled and has returned when stop does; after stop, uses start no
// write at all.
func TestToucherStopOwnsItsWrites(t *testing.T) {
	release := make(chan struct{})
	var started, finished, cancelled atomic.Int32
	tc := newToucher(func(ctx context.Context, keyID int64, at time.Time) error {
		started.Add(1)
		defer finished.Add(1)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			cancelled.Add(1)
			return ctx.Err()
		}
	}, time.Minute)
	now := time.Now()
	tc.used(context.Background(), 1, now)
	waitFor(t, func() bool { return started.Load() == 1 })

	// A write that ends within stop's context: stop waits for it.
	go func() { time.Sleep(50 * time.Millisecond); close(release) }()
	if !tc.stop(context.Background()) {
		t.Fatal("stop with no deadline reports writes cut short")
	}
	if finished.Load() != 1 || cancelled.Load() != 0 {
		t.Fatalf("after stop: %d finished, %d cancelled; want 1, 0", finished.Load(), cancelled.Load())
	}
	tc.used(context.Background(), 2, now)
	tc.stop(context.Background())
	if started.Load() != 1 {
		t.Fatalf("a use after stop started a write (%d writes)", started.Load())
	}
}

func TestToucherStopCancelsWritesAtItsDeadline(t *testing.T) {
	var finished atomic.Int32
	tc := newToucher(func(ctx context.Context, keyID int64, at time.Time) error {
		defer finished.Add(1)
		<-ctx.Done()
		return ctx.Err()
	}, time.Minute)
	tc.used(context.Background(), 1, time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if tc.stop(ctx) {
		t.Fatal("stop reports a blocked write as finished")
	}
	if finished.Load() != 1 {
		t.Fatal("stop returned before the write it cancelled")
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
