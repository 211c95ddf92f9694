package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// widgetLoad runs clients concurrent widget clients against the app at
// baseURL for d, with the widget key and agent.
func widgetLoad(baseURL, key string, agentID int64, clients int, d time.Duration) loadStats {
	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	session := fmt.Sprintf(`{"agent_id":%d}`, agentID)
	send := func(ctx context.Context, method, path, body string) (time.Duration, error) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, baseURL+path, rd)
		if err != nil {
			return 0, err
		}
		req.Header.Set("X-API-Key", key)
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

// The load generator runs in a child process (this test binary again, with
// WIDGETLOAD_CHILD set), so that the benchmark process's own CPU is the
// app's (with the fake provider, a loopback HTTP server in the same
// process) and not the clients'.
func init() {
	if os.Getenv("WIDGETLOAD_CHILD") != "1" {
		return
	}
	agentID, _ := strconv.ParseInt(os.Getenv("WIDGETLOAD_AGENT"), 10, 64)
	clients, _ := strconv.Atoi(os.Getenv("WIDGETLOAD_CLIENTS"))
	ms, _ := strconv.Atoi(os.Getenv("WIDGETLOAD_MS"))
	st := widgetLoad(os.Getenv("WIDGETLOAD_URL"), os.Getenv("WIDGETLOAD_KEY"), agentID, clients, time.Duration(ms)*time.Millisecond)
	json.NewEncoder(os.Stdout).Encode(childStats{
		Requests: st.requests, Errors: st.errors, Elapsed: st.elapsed, FirstError: st.firstError,
		All: st.all.wire(), Config: st.config.wire(), Session: st.session.wire(),
	})
	os.Exit(0)
}

// childStats is loadStats as the child prints it.
type childStats struct {
	Requests, Errors     int
	Elapsed              time.Duration
	FirstError           string
	All, Config, Session [3]time.Duration
}

func (l latencies) wire() [3]time.Duration { return [3]time.Duration{l.p50, l.p99, l.max} }

func fromWire(w [3]time.Duration) latencies { return latencies{w[0], w[1], w[2]} }

// runLoadChild runs the load generator in a child process against w and
// returns its outcome and the child's CPU seconds.
func runLoadChild(b *testing.B, w *widgetSite, clients int, d time.Duration) (loadStats, float64) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WIDGETLOAD_CHILD=1", "WIDGETLOAD_URL="+w.s.URL, "WIDGETLOAD_KEY="+w.key,
		"WIDGETLOAD_AGENT="+strconv.FormatInt(w.agent.ID, 10), "WIDGETLOAD_CLIENTS="+strconv.Itoa(clients),
		"WIDGETLOAD_MS="+strconv.FormatInt(d.Milliseconds(), 10))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("load child: %v", err)
	}
	var c childStats
	if err := json.Unmarshal(out, &c); err != nil {
		b.Fatalf("load child output %q: %v", out, err)
	}
	u := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
	return loadStats{requests: c.Requests, errors: c.Errors, elapsed: c.Elapsed, firstError: c.FirstError,
		all: fromWire(c.All), config: fromWire(c.Config), session: fromWire(c.Session)}, cpu
}

// cpuSample is the CPU seconds used so far by this process, by the
// PostgreSQL cluster it started (the postmaster, its reaped children and its
// live ones) and by the redis-server it started.
type cpuSample struct{ self, postgres, redis float64 }

func sampleCPU() cpuSample {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	s := cpuSample{self: time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()}
	self := os.Getpid()
	procs := readProcs()
	for _, p := range procs {
		if p.ppid != self {
			continue
		}
		switch p.comm {
		case "postgres":
			s.postgres += p.cpu + p.childCPU
			for _, c := range procs {
				if c.ppid == p.pid {
					s.postgres += c.cpu
				}
			}
		case "redis-server":
			s.redis += p.cpu
		}
	}
	return s
}

type procStat struct {
	pid, ppid     int
	comm          string
	cpu, childCPU float64 // seconds: utime+stime, cutime+cstime
}

// readProcs reads /proc/*/stat.
func readProcs() []procStat {
	dirs, _ := os.ReadDir("/proc")
	var out []procStat
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(string(b[closing+2:]))
		if len(f) < 15 {
			continue
		}
		n := func(i int) float64 { v, _ := strconv.ParseFloat(f[i], 64); return v / 100 } // USER_HZ is 100 on Linux
		ppid, _ := strconv.Atoi(f[1])
		out = append(out, procStat{pid: pid, ppid: ppid, comm: string(b[open+1 : closing]),
			cpu: n(11) + n(12), childCPU: n(13) + n(14)})
	}
	return out
}

// raiseKeyLimit sets the site key's per-minute limit past what any run
// sends (the API caps it at 100 000 a minute, which a fast run passes in
// under ten seconds), in the store, then waits out the key cache (3 s) so
// the limit counts from the first request. The one-window limit keeps the
// usual single-counter path.
func raiseKeyLimit(b *testing.B, w *widgetSite) {
	ctx := context.Background()
	k, err := w.s.App.Store.WidgetKey(ctx, w.project.ID, w.channel.ID)
	if err != nil {
		b.Fatal(err)
	}
	k.RateLimitPerMinute, k.RateLimitPerDay = 1<<40, nil
	if _, err := w.s.App.Store.UpdateWidgetKey(ctx, k); err != nil {
		b.Fatal(err)
	}
	time.Sleep(3100 * time.Millisecond)
}

// BenchmarkWidgetLoad runs the widget load on SQLite with in-memory rate
// limits and on PostgreSQL with Redis rate limits: WIDGETLOAD_CLIENTS
// clients (default 50) for WIDGETLOAD_SECONDS (default 10) each, and
// reports throughput, latency percentiles and errors, and the CPU per
// request of each process: agentline (this process: the app and the fake
// provider), PostgreSQL (all the cluster's processes) and redis-server,
// and of the load generator (a child process) apart. The key's limits are
// set high enough never to refuse. Run with AGENTLINE_REQUIRE_POSTGRES=1
// AGENTLINE_REQUIRE_REDIS=1 so a missing server fails instead of skipping.
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
			raiseKeyLimit(b, w)
			for range b.N {
				runtime.GC()
				c0 := sampleCPU()
				st, loadCPU := runLoadChild(b, w, clients, d)
				c1 := sampleCPU()
				rate := float64(st.requests) / st.elapsed.Seconds()
				per := func(sec float64) float64 { return sec * 1e6 / float64(max(st.requests, 1)) }
				app, pg, rd := per(c1.self-c0.self), per(c1.postgres-c0.postgres), per(c1.redis-c0.redis)
				b.ReportMetric(rate, "req/s")
				b.ReportMetric(float64(st.all.p50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(st.all.p99.Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(st.errors), "errors")
				b.ReportMetric(app, "app-µs/req")
				if s.db == store.Postgres {
					b.ReportMetric(pg, "pg-µs/req")
					b.ReportMetric(rd, "redis-µs/req")
				}
				b.ReportMetric(app+pg+rd, "total-µs/req")
				b.ReportMetric(per(loadCPU), "loadgen-µs/req")
				b.Logf("%s, %d clients, %v: %d requests (%.0f/s), %d errors %s\n  all:     %v\n  config:  %v\n  session: %v\n  CPU per request: agentline %.0f µs, postgres %.0f µs, redis-server %.0f µs, total %.0f µs (load generator %.0f µs)",
					s.name, clients, st.elapsed.Round(time.Millisecond), st.requests, rate, st.errors, st.firstError, st.all, st.config, st.session,
					app, pg, rd, app+pg+rd, per(loadCPU))
			}
		})
	}
}
