package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/ratelimit/redistest"
	"github.com/agentline/agentline/internal/store"
)

// The widget API load run: concurrent widget clients, each doing what a
// page with the widget does, GET /widget/v1/config then POST
// /widget/v1/session (key and origin checks, rate limit, a client secret
// from the fake provider, the session stored), over and over for a fixed
// time against a whole app on loopback. Run by `make bench`:
//
//	WIDGETLOAD_CLIENTS=50 WIDGETLOAD_SECONDS=10 go test -run '^$' -bench WidgetLoad -benchtime 1x ./internal/app/

// loadStats is one load run's outcome.
type loadStats struct {
	requests, errors int
	elapsed          time.Duration
	all, config      latencies
	session          latencies
	firstError       string
}

// latencies are the percentiles of answered requests.
type latencies struct{ p50, p99, max time.Duration }

func percentiles(l []time.Duration) latencies {
	if len(l) == 0 {
		return latencies{}
	}
	slices.Sort(l)
	return latencies{l[len(l)/2], l[len(l)*99/100], l[len(l)-1]}
}

func (l latencies) String() string {
	return fmt.Sprintf("p50 %v p99 %v max %v", l.p50.Round(10*time.Microsecond), l.p99.Round(10*time.Microsecond), l.max.Round(10*time.Microsecond))
}

// maxLoadRequests bounds a run's count whatever its length.
const maxLoadRequests = 2_000_000

// widgetLoad runs clients concurrent widget clients against w for d.
func widgetLoad(b *testing.B, w *widgetSite, clients int, d time.Duration) loadStats {
	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	session := fmt.Sprintf(`{"agent_id":%d}`, w.agent.ID)
	send := func(ctx context.Context, method, path, body string) (time.Duration, error) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, w.s.URL+path, rd)
		if err != nil {
			return 0, err
		}
		req.Header.Set("X-API-Key", w.key)
		req.Header.Set("Origin", siteOrigin)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		lat := time.Since(start)
		if err == nil && res.StatusCode/100 != 2 {
			err = fmt.Errorf("%s %s: %s", method, path, res.Status)
		}
		return lat, err
	}

	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	stop := time.Now().Add(d)
	lats := make([][2][]time.Duration, clients) // per client: config, session
	errs := make([]int, clients)
	var firstErr sync.Once
	var first string
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		wg.Go(func() {
			for n := 0; time.Now().Before(stop) && n < maxLoadRequests/clients; n += 2 {
				for k, r := range [][3]string{{"GET", "/widget/v1/config", ""}, {"POST", "/widget/v1/session", session}} {
					lat, err := send(ctx, r[0], r[1], r[2])
					if err != nil {
						errs[i]++
						firstErr.Do(func() { first = err.Error() })
						continue
					}
					lats[i][k] = append(lats[i][k], lat)
				}
			}
		})
	}
	wg.Wait()
	st := loadStats{elapsed: time.Since(start), firstError: first}
	var config, sessions []time.Duration
	for i := range clients {
		config = append(config, lats[i][0]...)
		sessions = append(sessions, lats[i][1]...)
		st.errors += errs[i]
	}
	st.requests = len(config) + len(sessions) + st.errors
	st.all = percentiles(slices.Concat(config, sessions))
	st.config, st.session = percentiles(config), percentiles(sessions)
	return st
}

// envInt reads a positive whole number from the environment, within max.
func envInt(b *testing.B, name string, def, max int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		b.Fatalf("%s: want 1..%d, got %q", name, max, v)
	}
	return n
}

// BenchmarkWidgetLoad runs the widget load on SQLite with in-memory rate
// limits and on PostgreSQL with Redis rate limits: WIDGETLOAD_CLIENTS
// clients (default 50) for WIDGETLOAD_SECONDS (default 10) each, and
// reports throughput, latency percentiles and errors. The key's limits are
// set high enough never to refuse.
func BenchmarkWidgetLoad(b *testing.B) {
	clients := envInt(b, "WIDGETLOAD_CLIENTS", 50, 1000)
	d := time.Duration(envInt(b, "WIDGETLOAD_SECONDS", 10, 300)) * time.Second
	setups := []struct {
		name string
		db   store.Dialect
		env  func(b *testing.B) map[string]string
	}{
		{"sqlite+memory", store.SQLite, func(*testing.B) map[string]string { return nil }},
		{"postgres+redis", store.Postgres, func(b *testing.B) map[string]string {
			return map[string]string{"AGENTLINE_REDIS_URL": redistest.Start(b)}
		}},
	}
	for _, s := range setups {
		b.Run(fmt.Sprintf("%s/clients=%d", s.name, clients), func(b *testing.B) {
			w := startWidgetSite(b, s.db, s.env(b))
			w.s.Must(b, 200, "PATCH", "/api/channels/"+itoa(w.channel.ID)+"/key", w.token,
				map[string]any{"rate_limit_per_minute": 100_000, "rate_limit_per_day": nil}, nil)
			for range b.N {
				st := widgetLoad(b, w, clients, d)
				rate := float64(st.requests) / st.elapsed.Seconds()
				b.ReportMetric(rate, "req/s")
				b.ReportMetric(float64(st.all.p50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(st.all.p99.Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(st.errors), "errors")
				b.Logf("%s, %d clients, %v: %d requests (%.0f/s), %d errors %s\n  all:     %v\n  config:  %v\n  session: %v",
					s.name, clients, st.elapsed.Round(time.Millisecond), st.requests, rate, st.errors, st.firstError, st.all, st.config, st.session)
			}
		})
	}
}
