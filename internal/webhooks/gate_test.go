package webhooks

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// waitingOn is how many jobs wait for a slot of the endpoint.
func (gs *gates) waitingOn(endpointID int64) int {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if g := gs.by[endpointID]; g != nil {
		return g.waiting
	}
	return 0
}

// waitFor yields until n jobs wait on the endpoint (bounded).
func waitFor(t *testing.T, gs *gates, endpointID int64, n int) {
	t.Helper()
	for i := 0; i < 1_000_000; i++ {
		if gs.waitingOn(endpointID) == n {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("%d jobs never waited on endpoint %d", n, endpointID)
}

// TestGatesWaitForASlot: with its slots busy, a job waits for one and takes
// it when it is freed; past 2×perEP waiters, a job gets none at once (and is
// told how long the oldest request has been in flight); another endpoint's
// slots are not affected; a cancelled wait gets none; the gate is dropped
// when nobody uses it.
func TestGatesWaitForASlot(t *testing.T) {
	gs := newGates(2)
	ctx := context.Background()
	r1, _ := gs.acquire(ctx, 1)
	r2, _ := gs.acquire(ctx, 1)
	if r1 == nil || r2 == nil {
		t.Fatal("free slots were not taken")
	}
	got := make(chan func(), 4)
	for range 4 {
		go func() { r, _ := gs.acquire(ctx, 1); got <- r }()
	}
	waitFor(t, gs, 1, 4)
	if r, busy := gs.acquire(ctx, 1); r != nil || busy <= 0 {
		t.Fatalf("a third waiter got a slot (%v) or no hint (%v)", r != nil, busy)
	}
	if r, _ := gs.acquire(ctx, 2); r == nil {
		t.Fatal("another endpoint's slot was refused")
	} else {
		r()
	}
	r1()
	r3 := <-got
	if r3 == nil {
		t.Fatal("the waiter did not get the freed slot")
	}
	r2()
	for range 3 {
		r4 := <-got
		if r4 == nil {
			t.Fatal("a waiter did not get a freed slot")
		}
		r4()
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r5, _ := gs.acquire(cctx, 1) // one slot free: taken without waiting
	if r5 == nil {
		t.Fatal("a free slot was refused")
	}
	if r, _ := gs.acquire(cctx, 1); r != nil {
		t.Fatal("a cancelled wait got a slot")
	}
	r3()
	r5()
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if len(gs.by) != 0 {
		t.Fatalf("gates left behind: %v", gs.by)
	}
}

// TestBusySnoozeBounds: the snooze of a job that got no slot follows the
// age of the requests in flight, within 100 ms and the attempt timeout
// (plus jitter).
func TestBusySnoozeBounds(t *testing.T) {
	for _, c := range []struct {
		busy, jitter, want float64
	}{{0, 0, 0.1}, {0.01, 1, 0.15}, {2, 0, 4}, {60, 0, 10}, {60, 1, 15}} {
		got := busySnooze(seconds(c.busy), c.jitter)
		if d := got - seconds(c.want); d < -1e6 || d > 1e6 {
			t.Errorf("busySnooze(%vs, %v) = %v, want %vs", c.busy, c.jitter, got, c.want)
		}
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
