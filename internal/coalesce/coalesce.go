// Package coalesce is group commit for round trips: the requests that
// arrive while one round trip is in flight go together in the next. A
// server that answers many small requests (PostgreSQL inserting a row,
// Redis incrementing a counter) spends most of its CPU per round trip, not
// per item, so under load this cuts its cost per request several times;
// with no load nothing changes, because nothing ever waits to fill a batch:
// a request that finds no round trip in flight starts one at once.
package coalesce

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// errPanicked is the error of the calls whose Flush panicked.
var errPanicked = errors.New("coalesce: flush panicked")

// Group coalesces calls of Do into calls of Flush, one at a time. The zero
// value needs Flush set; it must not be copied after first use.
type Group[T, R any] struct {
	// Flush makes one round trip for items (at least one, at most Max) and
	// returns one result per item, in order, or an error for all of them.
	Flush func(ctx context.Context, items []T) ([]R, error)
	// Max bounds the items of one Flush; 0 means no bound.
	Max int

	mu      sync.Mutex
	queue   []*call[T, R]
	leading bool
}

// call is one item in the queue and, once flushed, its result.
type call[T, R any] struct {
	item T
	// turn receives true when this call is to lead the next flush, or
	// false when its result is set.
	turn chan bool
	res  R
	err  error
}

// Do returns item's result from the next flush. The call that finds no
// flush in flight leads one with its own ctx, for itself and for whatever
// queued behind it (up to Max); the first call that arrived meanwhile then
// leads the next. So one flush is in flight at a time, no caller leads two,
// and Flush gets a leader's context: Flush decides whether a leader's
// cancellation may fail the others (context.WithoutCancel).
func (g *Group[T, R]) Do(ctx context.Context, item T) (R, error) {
	c := &call[T, R]{item: item, turn: make(chan bool, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead && !<-c.turn {
		return c.res, c.err
	}
	g.flush(ctx, c)
	return c.res, c.err
}

// Queued counts the calls waiting for the next flush.
func (g *Group[T, R]) Queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// flush runs one Flush for the head of the queue (the leader's own call
// first), sets each call's result, and then hands the lead to the first
// call still queued, or ends leading when none is.
func (g *Group[T, R]) flush(ctx context.Context, leader *call[T, R]) {
	g.mu.Lock()
	n := len(g.queue)
	if g.Max > 0 {
		n = min(n, g.Max)
	}
	batch := g.queue[:n:n]
	g.queue = append([]*call[T, R](nil), g.queue[n:]...)
	g.mu.Unlock()
	items := make([]T, n)
	for i, c := range batch {
		items[i] = c.item
	}
	// A panicking Flush still answers every call and passes the lead on,
	// or every later call would wait forever; the leader then panics.
	var res []R
	err := errPanicked // until Flush returns
	defer func() {
		for i, c := range batch {
			if err != nil {
				c.err = err
			} else {
				c.res = res[i]
			}
			if c != leader {
				c.turn <- false
			}
		}
		g.handOff()
	}()
	res, err = g.Flush(ctx, items)
	if err == nil && len(res) != n {
		err = fmt.Errorf("coalesce: %d results for %d items", len(res), n)
	}
}

// handOff gives the lead to the first call still queued, or ends leading
// when none is.
func (g *Group[T, R]) handOff() {
	g.mu.Lock()
	var next *call[T, R]
	if len(g.queue) > 0 {
		next = g.queue[0]
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	if next != nil {
		next.turn <- true
	}
}
