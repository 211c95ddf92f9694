package webhooks

import (
	"context"
	"sync"
	"time"
)

// slotWait bounds how long a job waits in process for a free slot of its
// endpoint before it gives its worker back (snoozes). A fast receiver frees
// a slot in milliseconds, so a burst drains without snoozes; a hanging one
// holds its slots for the attempt timeout, and its waiting jobs let go after
// this long.
const slotWait = 2 * time.Second

// gates limits the requests one instance sends to each endpoint at once
// (perEP), and how many jobs may wait for a slot of one endpoint at once
// (2×perEP): the others snooze, so an endpoint that hangs holds at most
// 3×perEP of the queue's workers (12 of 20 by default) and the rest serve
// other endpoints. More waiters drain a burst faster (every worker waiting:
// about twice as fast, measured) but let one endpoint take every worker.
type gates struct {
	perEP int
	mu    sync.Mutex
	by    map[int64]*gate
}

// gate is one endpoint's slots; it is dropped when no job holds or waits
// for one.
type gate struct {
	slots   chan struct{} // a send takes a slot, a receive frees it
	refs    int           // jobs holding or waiting for a slot
	waiting int
	held    map[int]time.Time // when each current holder took its slot
	next    int
}

func newGates(perEP int) *gates { return &gates{perEP: perEP, by: map[int64]*gate{}} }

// acquire takes a slot of the endpoint, waiting up to slotWait (or until
// ctx ends) when all are busy. On success it returns the release function;
// otherwise the age of the oldest request in flight to the endpoint, which
// says how soon a slot may be free (a hint for the snooze).
func (gs *gates) acquire(ctx context.Context, endpointID int64) (release func(), busyFor time.Duration) {
	gs.mu.Lock()
	g := gs.by[endpointID]
	if g == nil {
		g = &gate{slots: make(chan struct{}, gs.perEP), held: map[int]time.Time{}}
		gs.by[endpointID] = g
	}
	g.refs++
	select {
	case g.slots <- struct{}{}:
		defer gs.mu.Unlock()
		return gs.hold(endpointID, g), 0
	default:
	}
	if g.waiting >= 2*gs.perEP {
		defer gs.mu.Unlock()
		return nil, gs.giveUp(endpointID, g)
	}
	g.waiting++
	gs.mu.Unlock()

	t := time.NewTimer(slotWait)
	defer t.Stop()
	got := false
	select {
	case g.slots <- struct{}{}:
		got = true
	case <-t.C:
	case <-ctx.Done():
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g.waiting--
	if got {
		return gs.hold(endpointID, g), 0
	}
	return nil, gs.giveUp(endpointID, g)
}

// hold records a holder of a slot taken; gs.mu is held.
func (gs *gates) hold(endpointID int64, g *gate) func() {
	tok := g.next
	g.next++
	g.held[tok] = time.Now()
	return func() {
		gs.mu.Lock()
		defer gs.mu.Unlock()
		delete(g.held, tok)
		<-g.slots
		gs.unref(endpointID, g)
	}
}

// giveUp drops a job that got no slot and returns the age of the oldest
// request in flight; gs.mu is held.
func (gs *gates) giveUp(endpointID int64, g *gate) time.Duration {
	var oldest time.Duration
	now := time.Now()
	for _, at := range g.held {
		oldest = max(oldest, now.Sub(at))
	}
	gs.unref(endpointID, g)
	return oldest
}

func (gs *gates) unref(endpointID int64, g *gate) {
	if g.refs--; g.refs == 0 {
		delete(gs.by, endpointID)
	}
}

// busySnooze is how long a job that got no slot waits before it tries
// again: twice the age of the oldest request in flight to the endpoint
// (a fast receiver: soon; a hanging one: about when its attempts time
// out), between 100 ms and the attempt timeout, plus up to 50 % jitter so
// the snoozed jobs do not all come back at once.
func busySnooze(busyFor time.Duration, jitter float64) time.Duration {
	d := min(max(2*busyFor, 100*time.Millisecond), attemptTimeout)
	return d + time.Duration(jitter*0.5*float64(d))
}
