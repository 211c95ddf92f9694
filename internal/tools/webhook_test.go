package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/egress/egresstest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// hookServer is the customer's endpoint: it records what it got and answers
// by path.
func hookServer(t *testing.T) (*httptest.Server, chan *http.Request, chan []byte) {
	t.Helper()
	reqs, bodies := make(chan *http.Request, 10), make(chan []byte, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		reqs <- r
		bodies <- b
		switch r.URL.Path {
		case "/order":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"status":"shipped","query":%q}`, r.URL.RawQuery)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "/down":
			http.Error(w, "database is down", http.StatusServiceUnavailable)
		case "/huge":
			chunk := strings.Repeat("x", 64<<10)
			for range 64 { // 4 MiB
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		case "/moved":
			http.Redirect(w, r, "/order", http.StatusFound)
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, reqs, bodies
}

var orderSchema = json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string","pattern":"^[0-9]+$"},"verbose":{"type":"boolean"}},"required":["order_id"]}`)

func TestWebhookCalls(t *testing.T) {
	e := newEnv(t, storetest.Open(t, store.SQLite))
	srv, reqs, bodies := hookServer(t)
	mk := func(name, path, method string, timeoutMS int) {
		e.addTool(t, e.agent, agentline.WebhookTool{Name: name, Description: "d", Parameters: orderSchema, URL: srv.URL + path,
			Method: method, TimeoutMS: timeoutMS, Headers: map[string]string{"Authorization": "Bearer s3cret"}})
	}
	mk("post_order", "/order", "POST", 0)
	mk("get_order", "/order?shop=1", "GET", 0)
	mk("slow", "/slow", "POST", 200)
	mk("down", "/down", "POST", 0)
	mk("huge", "/huge", "GET", 0)
	mk("moved", "/moved", "GET", 0)
	mk("empty", "/empty", "POST", 0)

	tests := []struct {
		name, tool, args string
		wantCode         string // "" for success
		wantOutput       string // substring of the output
		called           bool
	}{
		{"post success", "post_order", `{"order_id":"42","verbose":true}`, "", `"status":"shipped"`, true},
		{"get success", "get_order", `{"order_id":"42","verbose":true}`, "", `order_id=42`, true},
		{"redirect followed", "moved", `{"order_id":"7"}`, "", `"status":"shipped"`, true},
		{"empty answer", "empty", `{"order_id":"7"}`, "", `{"ok":true}`, true},
		{"timeout", "slow", `{"order_id":"1"}`, "timeout", "200ms", true},
		{"non-2xx", "down", `{"order_id":"1"}`, "http_error", "database is down", true},
		{"huge body capped", "huge", `{"order_id":"1"}`, "", "[output truncated", true},
		{"schema violation", "post_order", `{"order_id":42}`, "invalid_arguments", "order_id", false},
		{"missing required", "post_order", `{}`, "invalid_arguments", "order_id", false},
		{"not an object", "post_order", `[1,2]`, "invalid_arguments", "JSON object", false},
		{"malformed JSON", "post_order", `{"order_id":`, "invalid_arguments", "JSON object", false},
		{"unknown tool", "no_such_tool", `{}`, "unknown_tool", "no_such_tool", false},
		{"search without knowledge", SearchToolName, `{"query":"x"}`, "unknown_tool", SearchToolName, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := e.facility.Execute(context.Background(), e.agent, agentline.ToolCall{CallID: "call_1", Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if res.CallID != "call_1" {
				t.Fatalf("call id = %q", res.CallID)
			}
			if got := errorCode(t, res); got != tt.wantCode {
				t.Fatalf("code = %q, want %q; output %.300s", got, tt.wantCode, res.Output)
			}
			if !strings.Contains(res.Output, tt.wantOutput) {
				t.Fatalf("output %.300q does not contain %q", res.Output, tt.wantOutput)
			}
			if len(res.Output) > MaxOutputBytes+100 {
				t.Fatalf("output is %d bytes, over the cap", len(res.Output))
			}
			if tt.name == "timeout" && time.Since(start) > 3*time.Second {
				t.Fatalf("timeout took %v", time.Since(start))
			}
			var req *http.Request
			var body []byte
			if len(reqs) > 0 {
				req, body = <-reqs, <-bodies
			}
			if (req != nil) != tt.called {
				t.Fatalf("endpoint called = %v, want %v", req != nil, tt.called)
			}
			for len(reqs) > 0 { // redirects make two requests
				<-reqs
				<-bodies
			}
			if req == nil {
				return
			}
			if req.Header.Get("Authorization") != "Bearer s3cret" || req.Header.Get("X-Agentline-Call-Id") != "call_1" {
				t.Fatalf("headers = %v", req.Header)
			}
			switch tt.tool {
			case "post_order":
				if req.Method != "POST" || req.Header.Get("Content-Type") != "application/json" || string(body) != `{"order_id":"42","verbose":true}` {
					t.Fatalf("POST got %s %q %s", req.Method, req.Header.Get("Content-Type"), body)
				}
			case "get_order":
				if req.Method != "GET" || req.URL.Query().Get("order_id") != "42" || req.URL.Query().Get("verbose") != "true" || req.URL.Query().Get("shop") != "1" {
					t.Fatalf("GET got %s %s", req.Method, req.URL)
				}
			}
		})
	}

	if n := counterValue(t, e.facility, "post_order", "ok"); n != 1 {
		t.Errorf("post_order ok count = %v", n)
	}
	if n := counterValue(t, e.facility, "slow", "timeout"); n != 1 {
		t.Errorf("slow timeout count = %v", n)
	}
	if n := counterValue(t, e.facility, "huge", "truncated"); n != 1 {
		t.Errorf("huge truncated count = %v", n)
	}
	if n := counterValue(t, e.facility, "unknown", "unknown_tool"); n != 2 {
		t.Errorf("unknown tool count = %v", n)
	}
	var m dto.Metric
	if err := e.facility.duration.WithLabelValues("post_order").(interface{ Write(*dto.Metric) error }).Write(&m); err != nil || m.GetHistogram().GetSampleCount() != 5 { // one success, four refused arguments
		t.Errorf("post_order duration samples = %d, %v", m.GetHistogram().GetSampleCount(), err)
	}
}

// The caller giving up is agentline's error, not a tool result.
func TestExecuteCanceled(t *testing.T) {
	e := newEnv(t, storetest.Open(t, store.SQLite))
	srv, _, _ := hookServer(t)
	e.addTool(t, e.agent, agentline.WebhookTool{Name: "slow", Parameters: orderSchema, URL: srv.URL + "/slow", TimeoutMS: 30000})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := e.facility.Execute(ctx, e.agent, agentline.ToolCall{Name: "slow", Arguments: json.RawMessage(`{"order_id":"1"}`)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's deadline", err)
	}
	cancel()
	if _, err := e.facility.Execute(ctx, e.agent, agentline.ToolCall{Name: "slow"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("already canceled: %v", err)
	}
}

// A tool of another project's agent can never run, whatever agent value the
// caller passes.
func TestExecuteOnlyTheAgentsOwnTools(t *testing.T) {
	e := newEnv(t, storetest.Open(t, store.SQLite))
	srv, reqs, _ := hookServer(t)
	e.addTool(t, e.otherAgent, agentline.WebhookTool{Name: "their_tool", URL: srv.URL + "/order"})
	forged := []agentline.Agent{
		e.agent,
		{ID: e.otherAgent.ID, ProjectID: e.agent.ProjectID}, // right agent id, wrong project
		{ID: e.agent.ID, ProjectID: e.otherAgent.ProjectID}, // right project, wrong agent
	}
	for _, a := range forged {
		res, err := e.facility.Execute(context.Background(), a, agentline.ToolCall{Name: "their_tool"})
		if err != nil || errorCode(t, res) != "unknown_tool" {
			t.Fatalf("agent %+v ran another project's tool: %+v %v", a, res, err)
		}
		defs, err := e.facility.Definitions(context.Background(), a)
		if err != nil || len(defs) != 0 {
			t.Fatalf("agent %+v sees definitions %+v %v", a, defs, err)
		}
	}
	if len(reqs) != 0 {
		t.Fatal("the other project's endpoint was called")
	}
	if res, _ := e.facility.Execute(context.Background(), e.otherAgent, agentline.ToolCall{Name: "their_tool"}); res.IsError {
		t.Fatalf("owner agent cannot run its tool: %s", res.Output)
	}
}

// guardExcept is the SSRF guard with one address let through, so a test
// server on that loopback address can answer with a redirect elsewhere.
func guardExcept(allowed netip.Addr) func(string, string, syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		if ap, err := netip.ParseAddrPort(address); err == nil && ap.Addr() == allowed {
			return nil
		}
		return egress.Control(network, address, c)
	}
}

func TestSSRFGuard(t *testing.T) {
	e := newEnv(t, storetest.Open(t, store.SQLite))
	guarded := New(e.db, Options{Logger: quiet}) // AllowPrivateWebhooks false
	srv, reqs, _ := hookServer(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	// A server on 127.0.0.2, which the test lets through, that redirects to
	// the loopback server: the redirect's target must be refused.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	var redirected atomic.Int32
	redirector := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirected.Add(1)
		http.Redirect(w, r, srv.URL+"/order", http.StatusFound)
	}))
	redirector.Listener.Close()
	redirector.Listener = ln
	redirector.Start()
	defer redirector.Close()
	guarded.client = newWebhookClient(guardExcept(netip.MustParseAddr("127.0.0.2")), nil)

	tests := []struct{ name, url string }{
		{"127.0.0.1", fmt.Sprintf("http://127.0.0.1:%d/order", port)},
		{"::1", fmt.Sprintf("http://[::1]:%d/order", port)},
		{"10.0.0.1", "http://10.0.0.1/order"},
		{"192.168.1.1", "http://192.168.1.1/order"},
		{"172.16.0.1", "http://172.16.0.1/order"},
		{"169.254.169.254 metadata", "http://169.254.169.254/latest/meta-data/"},
		{"100.64.0.1 CGNAT", "http://100.64.0.1/"},
		{"0.0.0.0", fmt.Sprintf("http://0.0.0.0:%d/order", port)},
		{"fd00::1 ULA", "http://[fd00::1]/"},
		{"fe80::1 link-local", "http://[fe80::1]/"},
		{"IPv4-mapped loopback", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/order", port)},
		{"localhost resolves to loopback", fmt.Sprintf("http://localhost:%d/order", port)},
		{"redirect to loopback", "http://" + ln.Addr().String() + "/"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("probe_%d", i)
			e.addTool(t, e.agent, agentline.WebhookTool{Name: name, URL: tt.url, TimeoutMS: 2000})
			res, err := guarded.Execute(context.Background(), e.agent, agentline.ToolCall{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s -> %s", tt.url, res.Output)
			if code := errorCode(t, res); code != "blocked_address" {
				t.Fatalf("code = %q, want blocked_address; output %s", code, res.Output)
			}
		})
	}
	if len(reqs) != 0 {
		t.Fatalf("the loopback server was reached %d times", len(reqs))
	}
	if redirected.Load() != 1 {
		t.Fatalf("the redirecting server was reached %d times, want 1", redirected.Load())
	}
}

func counterValue(t *testing.T, f *Facility, labels ...string) float64 {
	t.Helper()
	var m dto.Metric
	if err := f.calls.WithLabelValues(labels...).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// Each call leaves one log line with its ids, duration and outcome, and
// nothing of the response body.
func TestExecuteLogsOneLinePerCall(t *testing.T) {
	e := newEnv(t, storetest.Open(t, store.SQLite))
	srv, _, _ := hookServer(t)
	e.addTool(t, e.agent, agentline.WebhookTool{Name: "down", URL: srv.URL + "/down"})
	var buf strings.Builder
	f := New(e.db, Options{AllowPrivateWebhooks: true, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	for _, name := range []string{"down", strings.Repeat("x", 5000)} {
		if _, err := f.Execute(context.Background(), e.agent, agentline.ToolCall{CallID: "call_9", Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log lines = %q", lines)
	}
	var first struct {
		Msg, Tool, CallID, Outcome string
		AgentID                    int64 `json:"agent_id"`
		Status                     int
		Duration                   int64
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Msg != "tool call" || first.Tool != "down" || first.AgentID != e.agent.ID || first.Outcome != "http_error" || first.Status != 503 || first.Duration <= 0 || !strings.Contains(lines[0], `"call_id":"call_9"`) {
		t.Fatalf("log line = %s", lines[0])
	}
	if strings.Contains(buf.String(), "database is down") {
		t.Fatalf("the response body was logged: %s", lines[0])
	}
	if len(lines[1]) > 600 || !strings.Contains(lines[1], `"outcome":"unknown_tool"`) {
		t.Fatalf("unknown tool line (%d bytes) = %.300s", len(lines[1]), lines[1])
	}
}

// Names are checked by the addresses they resolve to, whatever resolves
// them: a public-looking name that points inside is refused.
func TestSSRFGuardChecksResolvedNames(t *testing.T) {
	e := newEnv(t, storetest.Open(t, store.SQLite))
	srv, reqs, _ := hookServer(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	resolver := egresstest.Resolver(t, map[string]netip.Addr{
		"hooks.example.com":    netip.MustParseAddr("127.0.0.1"),
		"internal.example.com": netip.MustParseAddr("10.0.0.7"),
		"metadata.example.com": netip.MustParseAddr("169.254.169.254"),
	})
	guarded := New(e.db, Options{Resolver: resolver, Logger: quiet})
	open := New(e.db, Options{Resolver: resolver, AllowPrivateWebhooks: true, Logger: quiet})
	for _, host := range []string{"hooks.example.com", "internal.example.com", "metadata.example.com"} {
		e.addTool(t, e.agent, agentline.WebhookTool{Name: strings.Split(host, ".")[0], URL: fmt.Sprintf("http://%s:%d/order", host, port), TimeoutMS: 2000})
		res, err := guarded.Execute(context.Background(), e.agent, agentline.ToolCall{Name: strings.Split(host, ".")[0]})
		if err != nil || errorCode(t, res) != "blocked_address" {
			t.Fatalf("%s: %s %v", host, res.Output, err)
		}
	}
	if len(reqs) != 0 {
		t.Fatal("the guarded facility reached the server")
	}
	// With the guard off, the same name reaches the loopback server: the
	// refusal above came from the guard, not from a failed lookup.
	res, err := open.Execute(context.Background(), e.agent, agentline.ToolCall{Name: "hooks"})
	if err != nil || res.IsError || !strings.Contains(res.Output, "shipped") {
		t.Fatalf("unguarded: %s %v", res.Output, err)
	}
}

// onLoopbackOnly wraps a socket's control so that whatever it lets through
// off loopback is refused and counted: were the guard broken, this test
// would fail without sending a packet off the machine.
func onLoopbackOnly(control func(string, string, syscall.RawConn) error, leaked *atomic.Int32) func(string, string, syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		if err := control(network, address, c); err != nil {
			return err
		}
		if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().Unmap().IsLoopback() {
			leaked.Add(1)
			return errors.New("test: not leaving loopback")
		}
		return nil
	}
}

// Every range of the policy is refused when the guarded client connects:
// the address as the URL's host, a name that resolves to it, and a
// redirect to that name. The same client sends notify_url and event
// webhook deliveries (Facility.Client).
func TestGuardRefusesEveryRange(t *testing.T) {
	e := newEnv(t, storetest.Open(t, store.SQLite))
	srv, reqs, _ := hookServer(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	cases := egresstest.Refused()
	answers := map[string]netip.Addr{}
	for i, c := range cases {
		answers[fmt.Sprintf("h%d.example.com", i)] = netip.MustParseAddr(c.Addr)
	}
	// A server on 127.0.0.2, which the test lets through, redirects to
	// the URL in its query.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	redirector := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	redirector.Listener.Close()
	redirector.Listener = ln
	redirector.Start()
	defer redirector.Close()

	var leaked atomic.Int32
	guarded := New(e.db, Options{Logger: quiet})
	guarded.client = newWebhookClient(onLoopbackOnly(guardExcept(netip.MustParseAddr("127.0.0.2")), &leaked), egresstest.Resolver(t, answers))
	for i, c := range cases {
		name := fmt.Sprintf("http://h%d.example.com:%d/order", i, port)
		urls := map[string]string{
			"literal":  "http://" + net.JoinHostPort(c.Addr, strconv.Itoa(port)) + "/order",
			"name":     name,
			"redirect": "http://" + ln.Addr().String() + "/?to=" + url.QueryEscape(name),
		}
		for how, u := range urls {
			tool := fmt.Sprintf("t%d_%s", i, how)
			e.addTool(t, e.agent, agentline.WebhookTool{Name: tool, URL: u, TimeoutMS: 2000})
			res, err := guarded.Execute(context.Background(), e.agent, agentline.ToolCall{Name: tool})
			if err != nil {
				t.Fatal(err)
			}
			if code := errorCode(t, res); code != "blocked_address" {
				t.Errorf("%s (%s) by %s: code %q, want blocked_address; output %s", c.Name, c.Addr, how, code, res.Output)
			}
		}
	}
	if len(reqs) != 0 || leaked.Load() != 0 {
		t.Fatalf("the loopback server was reached %d times; %d dials off loopback were let through", len(reqs), leaked.Load())
	}
}
