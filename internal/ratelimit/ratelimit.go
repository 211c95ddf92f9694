// Package ratelimit counts requests per key in fixed windows (per minute, per
// day) and says whether one more may pass. Counters live in memory, or in
// Redis so that every instance shares them (falling back to memory while
// Redis does not answer). Both are exact under concurrency: a request passes
// only if every window has room, and then it counts in every window.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentline/agentline"
)

// Window is one limit: at most Limit requests per Period. Windows start at
// multiples of Period since the Unix epoch (so days are UTC days).
type Window struct {
	Limit  int64
	Period time.Duration
}

// Result is the decision on one request, for the RateLimit-* headers.
type Result struct {
	Allowed bool
	// Limit, Remaining and Reset describe the window closest to its limit.
	Limit     int64
	Remaining int64
	Reset     time.Duration
}

// Limiter decides whether a request under key may pass all windows.
type Limiter interface {
	Allow(ctx context.Context, key string, windows []Window) (Result, error)
}

// WriteHeaders sets RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset
// (seconds, rounded up).
func (r Result) WriteHeaders(h http.Header) {
	h.Set("RateLimit-Limit", strconv.FormatInt(r.Limit, 10))
	h.Set("RateLimit-Remaining", strconv.FormatInt(r.Remaining, 10))
	h.Set("RateLimit-Reset", strconv.Itoa(seconds(r.Reset)))
}

// Err is the rate_limited error of a refused request, with Retry-After.
func (r Result) Err() error {
	return &agentline.Error{Code: agentline.ERateLimited, RetryAfter: seconds(r.Reset),
		Message: fmt.Sprintf("rate limit of %d requests reached; retry in %d seconds", r.Limit, seconds(r.Reset))}
}

func seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

// window returns the index of the window that holds now and how long until
// it ends.
func (w Window) at(now time.Time) (index int64, reset time.Duration) {
	p := w.Period.Nanoseconds()
	n := now.UnixNano()
	index = n / p
	return index, time.Duration((index+1)*p - n)
}

// decide builds the result from each window's count after this request.
func decide(windows []Window, counts []int64, now time.Time) Result {
	best := Result{Allowed: true, Remaining: math.MaxInt64}
	for i, w := range windows {
		_, reset := w.at(now)
		rem := max(w.Limit-counts[i], 0)
		if rem < best.Remaining || (rem == best.Remaining && reset < best.Reset) {
			best = Result{Allowed: true, Limit: w.Limit, Remaining: rem, Reset: reset}
		}
	}
	return best
}

func refuse(w Window, now time.Time) Result {
	_, reset := w.at(now)
	return Result{Allowed: false, Limit: w.Limit, Remaining: 0, Reset: reset}
}

// Memory keeps counters in this process.
type Memory struct {
	mu       sync.Mutex
	counters map[string]counter
	now      func() time.Time
}

type counter struct {
	index int64
	n     int64
}

// NewMemory returns an empty in-memory limiter.
func NewMemory() *Memory { return &Memory{counters: map[string]counter{}, now: time.Now} }

// Allow counts the request in every window, or in none when one is full.
func (m *Memory) Allow(_ context.Context, key string, windows []Window) (Result, error) {
	now := m.now()
	names := make([]string, len(windows))
	next := make([]counter, len(windows))
	counts := make([]int64, len(windows))
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, w := range windows {
		idx, _ := w.at(now)
		names[i] = key + "/" + strconv.FormatInt(int64(w.Period), 10)
		c := m.counters[names[i]]
		if c.index != idx {
			c = counter{index: idx}
		}
		if c.n >= w.Limit {
			return refuse(w, now), nil
		}
		c.n++
		next[i], counts[i] = c, c.n
	}
	for i, c := range next {
		m.counters[names[i]] = c
	}
	return decide(windows, counts, now), nil
}
