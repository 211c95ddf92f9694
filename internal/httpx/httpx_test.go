package httpx_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

type errBody struct {
	Error struct {
		Code, Message, Field string
	} `json:"error"`
}

// serve runs h behind the edge with a 1 KiB body limit and returns the
// answer and the log.
func serve(t *testing.T, h http.Handler, method, target, body string) (*httptest.ResponseRecorder, errBody, string) {
	t.Helper()
	var log bytes.Buffer
	edge := httpx.NewEdge(slog.New(slog.NewJSONHandler(&log, nil)), 1024, prometheus.NewRegistry())
	mux := http.NewServeMux()
	mux.Handle("/", h)
	rec := httptest.NewRecorder()
	edge.Wrap(mux).ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(body)))
	var e errBody
	if rec.Code >= 400 {
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatalf("error answer is not JSON: %q", rec.Body)
		}
	}
	return rec, e, log.String()
}

// Internal error text is logged, never answered.
func TestInternalErrorsAreHidden(t *testing.T) {
	h := httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return fmt.Errorf("query users: %w", errors.New("pq: password authentication failed for user secret_admin"))
	})
	rec, e, log := serve(t, h, "GET", "/", "")
	if rec.Code != 500 || e.Error.Code != agentline.EInternal || e.Error.Message != "internal error" {
		t.Fatalf("answer = %d %+v", rec.Code, e)
	}
	if strings.Contains(rec.Body.String(), "secret_admin") {
		t.Fatal("internal detail reached the client")
	}
	if !strings.Contains(log, "secret_admin") || !strings.Contains(log, `"request_id"`) {
		t.Fatalf("internal detail not logged with the request id: %s", log)
	}
}

// A panic becomes a logged 500 in the JSON shape; the server goes on.
func TestPanicsAreRecovered(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	rec, e, log := serve(t, h, "GET", "/", "")
	if rec.Code != 500 || e.Error.Code != agentline.EInternal {
		t.Fatalf("answer = %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(log, `"msg":"panic"`) || !strings.Contains(log, "boom") {
		t.Fatalf("panic not logged: %s", log)
	}
}

// Each error code answers with its status; a rate limit carries Retry-After.
func TestErrorCodesAndStatuses(t *testing.T) {
	for _, tc := range []struct {
		err        error
		status     int
		code       string
		retryAfter string
	}{
		{agentline.Invalid("name", "name is required"), 400, agentline.EInvalid, ""},
		{agentline.Errorf(agentline.EUnauthorized, "sign in"), 401, agentline.EUnauthorized, ""},
		{agentline.Errorf(agentline.EOriginNotAllowed, "no"), 401, agentline.EOriginNotAllowed, ""},
		{agentline.Errorf(agentline.EForbidden, "no"), 403, agentline.EForbidden, ""},
		{agentline.NotFound("agent"), 404, agentline.ENotFound, ""},
		{fmt.Errorf("wrapped: %w", agentline.NotFound("agent")), 404, agentline.ENotFound, ""},
		{agentline.Errorf(agentline.EConflict, "taken"), 409, agentline.EConflict, ""},
		{&agentline.Error{Code: agentline.ERateLimited, Message: "slow down", RetryAfter: 42}, 429, agentline.ERateLimited, "42"},
		{agentline.Errorf(agentline.EProvider, "upstream"), 502, agentline.EProvider, ""},
		{agentline.Errorf(agentline.ENotConfigured, "off"), 503, agentline.ENotConfigured, ""},
		{agentline.Errorf(agentline.EUnavailable, "draining"), 503, agentline.EUnavailable, ""},
		// A database that cannot be reached: the store classifies it as
		// unavailable with a Retry-After (store's TestClassify), and the edge
		// answers it wrapped as it comes.
		{fmt.Errorf("get agent: %w", &agentline.Error{Code: agentline.EUnavailable, RetryAfter: 5, Err: syscall.ECONNREFUSED}), 503, agentline.EUnavailable, "5"},
		{fmt.Errorf("get agent: %w", syscall.ECONNREFUSED), 500, agentline.EInternal, ""},
		{&agentline.Error{Code: "no_such_code", Message: "x"}, 500, "no_such_code", ""},
	} {
		h := httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { return tc.err })
		rec, e, _ := serve(t, h, "GET", "/", "")
		if rec.Code != tc.status || e.Error.Code != tc.code || rec.Header().Get("Retry-After") != tc.retryAfter {
			t.Errorf("%v: %d %+v Retry-After %q", tc.err, rec.Code, e, rec.Header().Get("Retry-After"))
		}
	}
}

// Decode refuses every malformed body with a message naming the problem.
func TestDecode(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type input struct {
		Name  *string `json:"name"`
		Count int     `json:"count"`
		Inner inner   `json:"inner"`
	}
	for _, tc := range []struct {
		body, status, code, field, message string
	}{
		{`{"name": "x", "count": 2}`, "200", "", "", ""},
		{`  {"name": "x"}  ` + "\n", "200", "", "", ""},
		{``, "400", agentline.EInvalid, "", "empty"},
		{`{"name": "x"`, "400", agentline.EInvalid, "", "ends in the middle"},
		{`{"name" "x"}`, "400", agentline.EInvalid, "", "malformed JSON at byte"},
		{`{"name": 5}`, "400", agentline.EInvalid, "name", "must be a string, not number"},
		{`{"count": "two"}`, "400", agentline.EInvalid, "count", "must be a number, not string"},
		{`{"inner": {"n": true}}`, "400", agentline.EInvalid, "inner.n", "must be a number, not bool"},
		{`{"inner": 3}`, "400", agentline.EInvalid, "inner", "must be an object"},
		{`[1, 2]`, "400", agentline.EInvalid, "", "must be an object, not array"},
		{`"text"`, "400", agentline.EInvalid, "", "must be an object, not string"},
		{`{"nme": "x"}`, "400", agentline.EInvalid, "nme", `unknown field "nme"`},
		{`{"name": "x"} {"name": "y"}`, "400", agentline.EInvalid, "", "single JSON value"},
		{`{"name": "x"} trailing`, "400", agentline.EInvalid, "", "single JSON value"},
		{`{"name": "` + strings.Repeat("a", 2000) + `"}`, "413", agentline.ETooLarge, "", "larger than 1024 bytes"},
		{`{"name": "x"}` + strings.Repeat(" ", 2000), "413", agentline.ETooLarge, "", "larger than 1024 bytes"},
	} {
		h := httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			var in input
			if err := httpx.Decode(r, &in); err != nil {
				return err
			}
			httpx.WriteJSON(w, 200, in)
			return nil
		})
		rec, e, _ := serve(t, h, "POST", "/", tc.body)
		if fmt.Sprint(rec.Code) != tc.status || e.Error.Code != tc.code || e.Error.Field != tc.field || !strings.Contains(e.Error.Message, tc.message) {
			t.Errorf("%.40q: %d %+v, want %s %s field %q message with %q", tc.body, rec.Code, e.Error, tc.status, tc.code, tc.field, tc.message)
		}
	}
}

func TestPathID(t *testing.T) {
	for _, tc := range []struct {
		value string
		id    int64
	}{
		{"1", 1}, {"9223372036854775807", 9223372036854775807},
		{"0", 0}, {"-1", 0}, {"abc", 0}, {"1.5", 0}, {"0x10", 0}, {"9223372036854775808", 0}, {"", 0},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.SetPathValue("agent_id", tc.value)
		id, err := httpx.PathID(r, "agent_id")
		if tc.id != 0 && (err != nil || id != tc.id) {
			t.Errorf("%q = %d %v, want %d", tc.value, id, err, tc.id)
		}
		if tc.id == 0 && !errors.Is(err, agentline.ErrNotFound) {
			t.Errorf("%q = %d %v, want not found", tc.value, id, err)
		}
	}
}

// Every request is logged once, as JSON, with its id, route and status.
func TestAccessLog(t *testing.T) {
	h := httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		httpx.NoContent(w)
		return nil
	})
	rec, _, log := serve(t, h, "DELETE", "/things/7", "")
	var line struct {
		Msg, Method, Path, Route, RequestID string
		Status                              int
	}
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one log line, got %q", log)
	}
	json.Unmarshal([]byte(lines[0]), &line)
	var id struct {
		RequestID string `json:"request_id"`
	}
	json.Unmarshal([]byte(lines[0]), &id)
	if line.Msg != "http" || line.Method != "DELETE" || line.Path != "/things/7" || line.Route != "/" || line.Status != 204 ||
		id.RequestID == "" || id.RequestID != rec.Header().Get("X-Request-Id") {
		t.Fatalf("access log = %s", lines[0])
	}
}

// A malformed id is named in the answer, but never more than 40 characters
// of it.
func TestPathIDMessageIsShort(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.SetPathValue("agent_id", strings.Repeat("x", 5000))
	_, err := httpx.PathID(r, "agent_id")
	if msg := agentline.ErrorMessage(err); len(msg) > 80 || !strings.HasPrefix(msg, `agent "xxxx`) {
		t.Fatalf("message = %.100q (%d bytes)", msg, len(msg))
	}
}

// WebSocket libraries hijack the connection and streaming handlers flush:
// both work through the edge's status recorder.
func TestHijackAndFlushPassThrough(t *testing.T) {
	edge := httpx.NewEdge(slog.New(slog.NewTextHandler(io.Discard, nil)), 1024, prometheus.NewRegistry())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first\n"))
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
		w.Write([]byte("second\n"))
	})
	mux.HandleFunc("GET /upgrade", func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\nhello")
		rw.Flush()
	})
	srv := httptest.NewServer(edge.Wrap(mux))
	defer srv.Close()

	res, err := http.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "first\nsecond\n" {
		t.Fatalf("stream = %q", body)
	}

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n"))
	res, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade = %v %v", res, err)
	}
}

func TestMessagePage(t *testing.T) {
	w := httptest.NewRecorder()
	httpx.MessagePage{Title: "Form", Style: "font:16px/1.5 system-ui,sans-serif;margin:16px;color:#111827"}.Write(w, http.StatusNotFound, "This <form> isn\u2019t here.")
	want := `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Form</title></head>
<body style="font:16px/1.5 system-ui,sans-serif;margin:16px;color:#111827">
<p role="alert">This &lt;form&gt; isn` + "\u2019" + `t here.</p>
</body></html>
`
	if w.Code != http.StatusNotFound || w.Body.String() != want {
		t.Errorf("status %d, body:\n%s\nwant:\n%s", w.Code, w.Body, want)
	}
	h := w.Header()
	if h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("Cache-Control") != "no-store" ||
		h.Get("Content-Security-Policy") != "default-src 'none'; style-src 'unsafe-inline'" {
		t.Errorf("headers %v", h)
	}
}

func TestNonce(t *testing.T) {
	a, b := httpx.Nonce(), httpx.Nonce()
	if len(a) != 22 || a == b || strings.Trim(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		t.Errorf("nonces %q, %q", a, b)
	}
}

// Every answer carries nosniff; a declared length over the limit is a 413
// before the handler runs, so it never sees (or half-parses) the body.
func TestNosniffAndDeclaredLength(t *testing.T) {
	ran := false
	h := httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		ran = true
		return agentline.Invalid("", "malformed")
	})
	rec, e, _ := serve(t, h, "POST", "/", strings.Repeat("!", 1025))
	if rec.Code != 413 || e.Error.Code != agentline.ETooLarge || ran {
		t.Fatalf("1025 bytes declared = %d %+v (handler ran: %t)", rec.Code, e, ran)
	}
	for _, body := range []string{"", strings.Repeat("!", 1024)} {
		rec, _, _ = serve(t, h, "POST", "/", body)
		if rec.Code != 400 || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%d bytes = %d, nosniff %q", len(body), rec.Code, rec.Header().Get("X-Content-Type-Options"))
		}
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<p>hi</p>")) })
	if rec, _, _ := serve(t, ok, "GET", "/", ""); rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatal("a 200 without nosniff")
	}
	// A GET reads no body: the page answers, the body stays unread.
	if rec, _, _ := serve(t, ok, "GET", "/", strings.Repeat("!", 2000)); rec.Code != 200 {
		t.Fatalf("GET with a body over the limit = %d, want the page", rec.Code)
	}
}
