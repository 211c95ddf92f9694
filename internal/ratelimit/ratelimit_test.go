package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/ratelimit/redistest"
)

// limiters returns a fresh limiter of each kind whose clock is *now, and a
// second Redis limiter sharing the first one's server (another instance).
func limiters(t *testing.T, now *time.Time) map[string]Limiter {
	t.Helper()
	clock := func() time.Time { return *now }
	m := NewMemory()
	m.now = clock
	url := redistest.Start(t)
	r, err := NewRedis(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.now = clock
	return map[string]Limiter{"memory": m, "redis": r}
}

func TestWindows(t *testing.T) {
	start := time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)
	now := start
	for name, l := range limiters(t, &now) {
		t.Run(name, func(t *testing.T) {
			now = start
			ctx := context.Background()
			windows := []Window{{Limit: 3, Period: time.Minute}, {Limit: 5, Period: 24 * time.Hour}}
			steps := []struct {
				advance   time.Duration
				allowed   bool
				limit     int64
				remaining int64
				reset     time.Duration
			}{
				{0, true, 3, 2, 50 * time.Second},
				{0, true, 3, 1, 50 * time.Second},
				{0, true, 3, 0, 50 * time.Second},
				{0, false, 3, 0, 50 * time.Second}, // minute full
				{time.Minute, true, 5, 1, 11*time.Hour + 58*time.Minute + 50*time.Second},
				{0, true, 5, 0, 11*time.Hour + 58*time.Minute + 50*time.Second},
				{0, false, 5, 0, 11*time.Hour + 58*time.Minute + 50*time.Second}, // day full
				{time.Minute, false, 5, 0, 11*time.Hour + 57*time.Minute + 50*time.Second},
				{12 * time.Hour, true, 3, 2, 50 * time.Second}, // next day
			}
			for i, s := range steps {
				now = now.Add(s.advance)
				got, err := l.Allow(ctx, "k1", windows)
				if err != nil {
					t.Fatal(err)
				}
				want := Result{Allowed: s.allowed, Limit: s.limit, Remaining: s.remaining, Reset: s.reset}
				if got != want {
					t.Fatalf("step %d: got %+v, want %+v", i, got, want)
				}
			}
			// Another key has its own counters.
			if got, _ := l.Allow(ctx, "k2", windows); !got.Allowed || got.Remaining != 2 {
				t.Fatalf("other key: %+v", got)
			}
		})
	}
}

// allowConcurrently sends n requests at once through the limiters in turn
// and counts those let through.
func allowConcurrently(t *testing.T, ls []Limiter, n int, windows []Window) int64 {
	t.Helper()
	var passed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := ls[i%len(ls)].Allow(context.Background(), "shared", windows)
			if err != nil {
				t.Error(err)
				return
			}
			if r.Allowed {
				passed.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	return passed.Load()
}

func TestExactUnderConcurrency(t *testing.T) {
	windows := []Window{{Limit: 37, Period: time.Hour}, {Limit: 1000, Period: 24 * time.Hour}}
	t.Run("memory", func(t *testing.T) {
		if got := allowConcurrently(t, []Limiter{NewMemory()}, 200, windows); got != 37 {
			t.Fatalf("%d of 200 passed, want 37", got)
		}
	})
	t.Run("two instances on one redis", func(t *testing.T) {
		url := redistest.Start(t)
		var ls []Limiter
		for range 2 {
			r, err := NewRedis(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ls = append(ls, r)
		}
		if got := allowConcurrently(t, ls, 200, windows); got != 37 {
			t.Fatalf("%d of 200 passed, want 37", got)
		}
	})
}

func TestHeadersAndError(t *testing.T) {
	h := http.Header{}
	r := Result{Allowed: false, Limit: 10, Remaining: 0, Reset: 1500 * time.Millisecond}
	r.WriteHeaders(h)
	if h.Get("RateLimit-Limit") != "10" || h.Get("RateLimit-Remaining") != "0" || h.Get("RateLimit-Reset") != "2" {
		t.Fatalf("headers = %v", h)
	}
	var e *agentline.Error
	if !errors.As(r.Err(), &e) || e.Code != agentline.ERateLimited || e.RetryAfter != 2 {
		t.Fatalf("err = %#v", r.Err())
	}
}

func TestRedisDown(t *testing.T) {
	if _, err := NewRedis(context.Background(), "unix:///nonexistent/redis.sock"); err == nil {
		t.Fatal("NewRedis with no server succeeded")
	}
	if _, err := NewRedis(context.Background(), "ftp://x"); err == nil {
		t.Fatal("bad URL accepted")
	}
	// Redis going away later refuses requests with unavailable rather than
	// letting them through unlimited.
	url := redistest.Start(t)
	r, err := NewRedis(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.client.Shutdown(context.Background()) // answers with the connection closing
	_, err = r.Allow(context.Background(), "k", []Window{{Limit: 1, Period: time.Minute}})
	if agentline.ErrorCode(err) != agentline.EUnavailable {
		t.Fatalf("Allow with Redis gone: %v", err)
	}
}
