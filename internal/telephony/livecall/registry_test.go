package livecall

import (
	"context"
	"testing"
	"time"
)

// A drain waits for running streams and for the streams of calls answered
// but not connected yet, until each arrives or its grace runs out.
func TestLiveCallsBusy(t *testing.T) {
	var l liveCalls
	now := time.Unix(1_700_000_000, 0)
	if n := l.busy(now); n != 0 {
		t.Fatalf("idle: busy = %d", n)
	}
	l.expect("CA1", now.Add(10*time.Second), now)
	l.expect("sr_2", now.Add(75*time.Second), now)
	if !l.enter() {
		t.Fatal("enter refused")
	}
	for _, tc := range []struct {
		at   time.Time
		want int
	}{
		{now, 3},
		{now.Add(10 * time.Second), 2}, // CA1's grace is over
		{now.Add(75 * time.Second), 1}, // so is sr_2's; one stream runs
	} {
		if n := l.busy(tc.at); n != tc.want {
			t.Errorf("busy at +%v = %d, want %d", tc.at.Sub(now), n, tc.want)
		}
	}
	l.settle("sr_2")
	l.leave()
	if n := l.busy(now); n != 1 {
		t.Fatalf("after sr_2 arrived and the stream left: busy = %d, want 1 (CA1)", n)
	}
	l.expect("CA3", now.Add(20*time.Second), now.Add(15*time.Second)) // drops CA1, expired
	if len(l.pending) != 1 {
		t.Fatalf("pending = %v, want only CA3", l.pending)
	}
}

// A final status callback waits for the end record of a call relayed
// here, at most its bound: at once for a call with no relay here, until
// the record is written (remove) for one, and not past the bound for a
// relay that runs on.
func TestAwaitRecorded(t *testing.T) {
	h := &Handler{live: &liveCalls{}}
	ctx := context.Background()
	if !h.AwaitRecorded(ctx, "CA1", time.Hour) {
		t.Fatal("no relay here, yet the wait says one runs")
	}
	h.live.add("CA1", nil)
	start := time.Now()
	if h.AwaitRecorded(ctx, "CA1", 20*time.Millisecond) {
		t.Fatal("the relay runs on, yet the wait says its end is recorded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("waited %v past its bound", d)
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		h.live.remove("CA1")
	}()
	if !h.AwaitRecorded(ctx, "CA1", time.Hour) {
		t.Fatal("the end was recorded, yet the wait says the relay runs")
	}
}
