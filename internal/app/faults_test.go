package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/ratelimit/redistest"
	"github.com/agentline/agentline/internal/store"
)

// scrapeMetric returns the value of an unlabelled metric from the metrics
// listener, or -1.
func scrapeMetric(t testing.TB, s *apptest.Server, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(s.Metrics(t), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// Redis killed under a running app: the widget API keeps answering and
// limiting, now per instance (a fresh count), the fallback shows in
// /metrics; Redis restarted on the same socket: the app goes back to it
// (the shared count starts over, as the new Redis is empty). Every session
// started before, during and after is stored.
func TestWidgetAPIWithRedisDown(t *testing.T) {
	t.Parallel()
	rds := redistest.StartServer(t)
	w := startWidgetSite(t, store.SQLite, map[string]string{"AGENTLINE_REDIS_URL": rds.URL})
	w.s.Must(t, 200, "PATCH", "/api/channels/"+itoa(w.channel.ID)+"/key", w.token,
		map[string]any{"rate_limit_per_minute": 100000, "rate_limit_per_day": 5}, nil)
	remaining := func(want string) {
		t.Helper()
		r := w.do(t, "GET", "/widget/v1/config", nil)
		if r.Status != 200 || r.Header.Get("RateLimit-Remaining") != want {
			t.Fatalf("config: %s, RateLimit-Remaining %q, want %s", r, r.Header.Get("RateLimit-Remaining"), want)
		}
	}
	var ids []string
	ids = append(ids, w.session(t)) // 4 left in Redis
	remaining("3")
	if v := scrapeMetric(t, w.s, "agentline_ratelimit_fallback"); v != 0 {
		t.Fatalf("agentline_ratelimit_fallback = %v with Redis up, want 0", v)
	}

	rds.Kill()
	ids = append(ids, w.session(t)) // this instance's own count: 4 left
	for _, want := range []string{"3", "2", "1", "0"} {
		remaining(want)
	}
	if r := w.do(t, "GET", "/widget/v1/config", nil); r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("over the per-instance limit with Redis down: %s %v", r, r.Header)
	}
	if v := scrapeMetric(t, w.s, "agentline_ratelimit_fallback"); v != 1 {
		t.Fatalf("agentline_ratelimit_fallback = %v with Redis down, want 1", v)
	}

	rds.Restart()
	deadline := time.Now().Add(15 * time.Second) // the app probes every 2 s
	for scrapeMetric(t, w.s, "agentline_ratelimit_fallback") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the app did not go back to Redis within 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ids = append(ids, w.session(t)) // the new Redis: 4 left
	remaining("3")

	stored := map[string]bool{}
	for _, s := range w.sessions(t) {
		stored[s.ID] = true
	}
	for i, id := range ids {
		if !stored[id] {
			t.Fatalf("session %d (%s) is not stored; stored: %v", i, id, stored)
		}
	}
}

// toolPathGoroutines counts the goroutines on an outbound tool call's path:
// the tools package and the HTTP client's connections. Counting only these,
// not every goroutine, keeps background work (job queue, sweeps) from
// looking like a leak.
func toolPathGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "net/http.(*persistConn)") || strings.Contains(g, "agentline/internal/tools.") {
			count++
		}
	}
	return count
}

// toolPathGoroutinesDownTo waits (at most 10 s) for toolPathGoroutines to
// drop to want or below, and returns it.
func toolPathGoroutinesDownTo(want int) int {
	n := toolPathGoroutines()
	for i := 0; i < 1000 && n > want; i++ {
		time.Sleep(10 * time.Millisecond)
		n = toolPathGoroutines()
	}
	return n
}

// A webhook tool whose endpoint never answers: the widget's tool call comes
// back within the tool's timeout as a tool error the model can read, while
// other widget and management requests are answered as usual; the session
// and its tool call record are stored; the webhook's connection is closed
// and no goroutine is left behind.
func TestWebhookToolHanging(t *testing.T) {
	hung := make(chan struct{}, 1)
	released := make(chan struct{}, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fast" {
			rw.Write([]byte(`{"ok":true}`))
			return
		}
		io.ReadAll(r.Body) // the server notices a hang-up only once the body is read
		hung <- struct{}{}
		<-r.Context().Done() // never answers; ends when agentline hangs up
		released <- struct{}{}
	}))
	defer hook.Close()
	w := startWidgetSite(t, store.SQLite, nil)
	const timeout = 500 * time.Millisecond
	for name, path := range map[string]string{"check_stock": "/hang", "ping": "/fast"} {
		w.s.Must(t, 201, "POST", "/api/agents/"+itoa(w.agent.ID)+"/tools", w.token, map[string]any{
			"name": name, "description": "Checks stock", "url": hook.URL + path, "timeout_ms": timeout.Milliseconds(),
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"sku": map[string]any{"type": "string"}}},
		}, nil)
	}
	sid := w.session(t)
	// A first call warms up connections, so that the goroutine count before
	// holds those that stay.
	if r := w.do(t, "POST", "/widget/v1/tools/execute", map[string]any{"session_id": sid, "call_id": "call_0", "name": "ping"}); r.Status != 200 {
		t.Fatalf("warm-up call: %s", r)
	}
	w.s.Client.CloseIdleConnections()
	before := toolPathGoroutines()

	type answer struct {
		r       *apptest.Response
		elapsed time.Duration
	}
	done := make(chan answer, 1)
	req := w.request(t, "POST", "/widget/v1/tools/execute",
		map[string]any{"session_id": sid, "call_id": "call_1", "name": "check_stock", "arguments": `{"sku":"A-1"}`})
	go func() {
		start := time.Now()
		// Client.Do, not Send: t.Fatal may not run on this goroutine.
		res, err := w.s.Client.Do(req)
		a := answer{elapsed: time.Since(start)}
		if err == nil {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			a.r = &apptest.Response{Status: res.StatusCode, Body: body}
		}
		done <- a
	}()
	<-hung
	// While the tool hangs, the rest of the API answers.
	var wg sync.WaitGroup
	errs := make(chan string, 3)
	wg.Go(func() {
		if r := w.do(t, "GET", "/widget/v1/config", nil); r.Status != 200 {
			errs <- "config: " + r.String()
		}
	})
	wg.Go(func() {
		if r := w.do(t, "POST", "/widget/v1/session", map[string]any{"agent_id": w.agent.ID}); r.Status != 201 {
			errs <- "session: " + r.String()
		}
	})
	wg.Go(func() {
		if r := w.s.Do(t, "GET", "/api/agents/"+itoa(w.agent.ID), w.token, nil); r.Status != 200 {
			errs <- "agent: " + r.String()
		}
	})
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("while a tool call hangs: %s", e)
	}
	select {
	case <-done:
		t.Fatal("the tool call answered before the other requests were through; the timeout is too short for this test")
	default:
	}

	a := <-done
	if a.r == nil {
		t.Fatal("the tool call failed at the HTTP level")
	}
	var res agentline.ToolResult
	if a.r.Status != 200 || json.Unmarshal(a.r.Body, &res) != nil || !res.IsError || res.CallID != "call_1" ||
		!strings.Contains(res.Output, `"code":"timeout"`) || !strings.Contains(res.Output, "did not answer within 500ms") {
		t.Fatalf("tool call answer: %d %s", a.r.Status, a.r.Body)
	}
	// Within the tool's timeout, not the 10 s default nor the 30 s cap.
	if a.elapsed < timeout || a.elapsed > 5*time.Second {
		t.Fatalf("the tool call took %v with a %v timeout", a.elapsed, timeout)
	}
	t.Logf("hanging tool answered in %v (timeout %v)", a.elapsed, timeout)
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("agentline did not hang up on the webhook")
	}

	var found bool
	for _, s := range w.sessions(t) {
		if s.ID != sid {
			continue
		}
		found = true
		if len(s.ToolCalls) != 2 || !strings.Contains(string(s.ToolCalls[1]), `"call_id":"call_1"`) ||
			!strings.Contains(string(s.ToolCalls[1]), `"is_error":true`) || !strings.Contains(string(s.ToolCalls[1]), `timeout`) {
			t.Fatalf("tool calls stored: %s", s.ToolCalls)
		}
	}
	if !found {
		t.Fatalf("session %s is not stored", sid)
	}
	w.s.Client.CloseIdleConnections()
	settled := time.Now()
	after := toolPathGoroutinesDownTo(before)
	if after > before {
		t.Fatalf("%d goroutines on the tool-call path before the hanging call, %d after", before, after)
	}
	t.Logf("goroutines: %d before, %d after (settled in %v)", before, after, time.Since(settled))
}
