package ratelimit

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/ratelimit/redistest"
)

func TestMain(m *testing.M) {
	RedisClientLogs(slog.New(slog.DiscardHandler)) // the dials that fail on purpose
	os.Exit(m.Run())
}

// limiters returns a fresh limiter of each kind whose clock is *now, and a
// second Redis limiter sharing the first one's server (another instance).
func limiters(t *testing.T, now *time.Time) map[string]Limiter {
	t.Helper()
	clock := func() time.Time { return *now }
	m := NewMemory()
	m.now = clock
	url := redistest.Start(t)
	r, err := NewRedis(context.Background(), url, RedisOptions{})
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

// twoInstances returns two Redis limiters sharing one fresh server, as two
// instances of agentline would.
func twoInstances(t *testing.T) []Limiter {
	t.Helper()
	url := redistest.Start(t)
	var ls []Limiter
	for range 2 {
		r, err := NewRedis(context.Background(), url, RedisOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		ls = append(ls, r)
	}
	return ls
}

func TestExactUnderConcurrency(t *testing.T) {
	windows := []Window{{Limit: 37, Period: time.Hour}, {Limit: 1000, Period: 24 * time.Hour}}
	t.Run("memory", func(t *testing.T) {
		if got := allowConcurrently(t, []Limiter{NewMemory()}, 200, windows); got != 37 {
			t.Fatalf("%d of 200 passed, want 37", got)
		}
	})
	t.Run("two instances on one redis", func(t *testing.T) {
		ls := twoInstances(t)
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

func TestRedisBadURL(t *testing.T) {
	if _, err := NewRedis(context.Background(), "ftp://x", RedisOptions{}); err == nil {
		t.Fatal("bad URL accepted")
	}
}

// logBuffer collects a logger's JSON lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// count returns how many lines hold s.
func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// passed sends n requests one after the other and counts those let
// through; an error fails the test.
func passed(t *testing.T, l Limiter, key string, n int, windows []Window) int {
	t.Helper()
	ok := 0
	for range n {
		r, err := l.Allow(context.Background(), key, windows)
		if err != nil {
			t.Fatalf("Allow: %v", err)
		}
		if r.Allowed {
			ok++
		}
	}
	return ok
}

// waitShared waits (at most 10 s) until every limiter counts in Redis again.
func waitShared(t *testing.T, ls ...*Redis) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, r := range ls {
		for r.fallback() != nil {
			if time.Now().After(deadline) {
				t.Fatal("the limiter did not go back to Redis within 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

const (
	fallbackLine = `"msg":"redis does not answer`
	backLine     = `"msg":"redis answers again`
)

// Redis killed: two instances keep answering, each limiting on its own with
// the same limits; one warning each, however many requests. Redis restarted
// on the same socket: both go back to it and the limits are shared and exact
// again; one info line each.
func TestRedisKilledAndRestarted(t *testing.T) {
	srv := redistest.StartServer(t)
	var logs logBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	instance := func() *Redis {
		r, err := NewRedis(context.Background(), srv.URL, RedisOptions{Logger: logger, ProbeInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	a, b := instance(), instance()
	windows := []Window{{Limit: 1000, Period: time.Minute}, {Limit: 10, Period: 24 * time.Hour}}

	if got := passed(t, a, "before", 6, windows) + passed(t, b, "before", 6, windows); got != 10 {
		t.Fatalf("%d of 12 passed before the fault, want the shared 10", got)
	}
	srv.Kill()
	for name, l := range map[string]*Redis{"a": a, "b": b} {
		if got := passed(t, l, "during", 25, windows); got != 10 {
			t.Fatalf("instance %s: %d of 25 passed with Redis down, want its own 10", name, got)
		}
		if g := testutil.ToFloat64(l.gauge); g != 1 {
			t.Fatalf("instance %s: fallback gauge %v with Redis down, want 1", name, g)
		}
	}
	if n := logs.count(fallbackLine); n != 2 {
		t.Fatalf("%d fallback lines for 2 instances and 50 requests, want 2:\n%s", n, logs.b.String())
	}

	srv.Restart()
	waitShared(t, a, b)
	// The restarted Redis is empty: 10 of 40 at once pass across both.
	if got := allowConcurrently(t, []Limiter{a, b}, 40, windows); got != 10 {
		t.Fatalf("%d of 40 passed after Redis came back, want the shared 10", got)
	}
	for name, l := range map[string]*Redis{"a": a, "b": b} {
		if g := testutil.ToFloat64(l.gauge); g != 0 {
			t.Fatalf("instance %s: fallback gauge %v with Redis back, want 0", name, g)
		}
	}
	if n, m := logs.count(backLine), logs.count(fallbackLine); n != 2 || m != 2 {
		t.Fatalf("%d back and %d fallback lines, want 2 and 2:\n%s", n, m, logs.b.String())
	}
}

// A Redis that stops answering without closing its connections (frozen,
// or the network dropping packets) makes requests give up on it after the
// client's timeouts and count in memory; then none waits on it.
func TestRedisFrozen(t *testing.T) {
	srv := redistest.StartServer(t)
	r, err := NewRedis(context.Background(), srv.URL, RedisOptions{Logger: slog.New(slog.DiscardHandler), ProbeInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	windows := []Window{{Limit: 3, Period: 24 * time.Hour}}
	if got := passed(t, r, "k", 1, windows); got != 1 {
		t.Fatal("first request refused")
	}
	srv.Freeze()
	start := time.Now()
	if got := passed(t, r, "k", 5, windows); got != 3 {
		t.Fatalf("%d of 5 passed with Redis frozen, want 3 counted in memory", got)
	}
	t.Logf("5 requests with Redis frozen took %v", time.Since(start))
	if r.fallback() == nil {
		t.Fatal("not counting in memory with Redis frozen")
	}
	srv.Thaw()
	waitShared(t, r)
	// Redis kept its count of 1, and the requests that timed out may still
	// have counted there once it thawed: at most 2 pass, and never the 3 a
	// fresh in-memory count would let through.
	if got := passed(t, r, "k", 5, windows); got > 2 {
		t.Fatalf("%d of 5 passed with Redis thawed, want at most the 2 left in Redis", got)
	}
}

// An instance starts while Redis is down: it starts, and counts in memory.
func TestRedisUnreachableAtStart(t *testing.T) {
	var logs logBuffer
	r, err := NewRedis(context.Background(), "unix://"+t.TempDir()+"/redis.sock",
		RedisOptions{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), ProbeInterval: time.Hour})
	if err != nil {
		t.Fatalf("NewRedis without a server: %v", err)
	}
	defer r.Close()
	windows := []Window{{Limit: 2, Period: 24 * time.Hour}}
	if got := passed(t, r, "k", 4, windows); got != 2 {
		t.Fatalf("%d of 4 passed, want 2 counted in memory", got)
	}
	if n := logs.count(fallbackLine); n != 1 {
		t.Fatalf("%d fallback lines, want 1:\n%s", n, logs.b.String())
	}
}

// A Redis that answers but refuses the script (here: out of memory) is not
// used either; the probe runs the script too, so it moves back only once
// the script runs again.
func TestRedisRefusingWrites(t *testing.T) {
	srv := redistest.StartServer(t)
	var logs logBuffer
	r, err := NewRedis(context.Background(), srv.URL, RedisOptions{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), ProbeInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	admin := r.client
	windows := []Window{{Limit: 2, Period: 24 * time.Hour}}
	if err := admin.ConfigSet(context.Background(), "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if got := passed(t, r, "k", 3, windows); got != 2 {
		t.Fatalf("%d of 3 passed with Redis out of memory, want 2 counted in memory", got)
	}
	time.Sleep(100 * time.Millisecond) // several probes, all refused
	if r.fallback() == nil || logs.count(backLine) != 0 {
		t.Fatalf("went back to a Redis that refuses the script:\n%s", logs.b.String())
	}
	if err := admin.ConfigSet(context.Background(), "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	waitShared(t, r)
	if got := passed(t, r, "k", 3, windows); got != 2 {
		t.Fatalf("%d of 3 passed with Redis back, want 2", got)
	}
	if n, m := logs.count(fallbackLine), logs.count(backLine); n != 1 || m != 1 {
		t.Fatalf("%d fallback and %d back lines, want 1 and 1:\n%s", n, m, logs.b.String())
	}
}
