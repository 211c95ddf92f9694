package ratelimit

import (
	"context"
	"testing"
	"time"
)

// One window takes Redis's fast path (INCR, no script): the same answers as
// in memory, refusals included, a fresh count in the next window, and the
// same exact total when two instances race.
func TestOneWindow(t *testing.T) {
	start := time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)
	now := start
	windows := []Window{{Limit: 2, Period: time.Minute}}
	for name, l := range limiters(t, &now) {
		t.Run(name, func(t *testing.T) {
			now = start
			steps := []struct {
				advance   time.Duration
				allowed   bool
				remaining int64
			}{
				{0, true, 1}, {0, true, 0}, {0, false, 0}, {0, false, 0},
				{time.Minute, true, 1}, // next window
			}
			for i, s := range steps {
				now = now.Add(s.advance)
				got, err := l.Allow(context.Background(), "k", windows)
				if err != nil {
					t.Fatal(err)
				}
				want := Result{Allowed: s.allowed, Limit: 2, Remaining: s.remaining, Reset: 50 * time.Second}
				if got != want {
					t.Fatalf("step %d: got %+v, want %+v", i, got, want)
				}
			}
		})
	}
	t.Run("two instances on one redis", func(t *testing.T) {
		ls := twoInstances(t)
		if got := allowConcurrently(t, ls, 200, []Window{{Limit: 37, Period: time.Hour}}); got != 37 {
			t.Fatalf("%d of 200 passed, want 37", got)
		}
	})
}
