package app_test

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

func startSQLite(t *testing.T) *apptest.Server {
	return apptest.StartFresh(t, store.SQLite, nil)
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	s.Must(t, 200, "GET", "/healthz", "", nil, nil)
	r := s.Must(t, 200, "GET", "/readyz", "", nil, nil)
	if !strings.Contains(string(r.Body), `"ready"`) {
		t.Fatalf("readyz = %s", r)
	}
	// With the database gone the instance is alive but not ready.
	s.App.Store.Close()
	r = s.Do(t, "GET", "/readyz", "", nil)
	if r.Status != http.StatusServiceUnavailable || r.ErrorCode() != agentline.EUnavailable {
		t.Fatalf("readyz without a database = %s, want 503 unavailable", r)
	}
	if strings.Contains(string(r.Body), "closed") {
		t.Fatalf("readyz leaks the internal error: %s", r)
	}
	s.Must(t, 200, "GET", "/healthz", "", nil, nil)
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	s.Must(t, 200, "GET", "/healthz", "", nil, nil)
	s.Must(t, 401, "GET", "/api/agents/7", "", nil, nil)
	s.Must(t, 404, "GET", "/no/such/path", "", nil, nil)
	s.Must(t, 404, "BREW", "/coffee", "", nil, nil)
	body := s.Metrics(t) // Prometheus text, from the metrics listener
	for _, want := range []string{
		`agentline_http_requests_total{method="GET",route="GET /healthz",status="200"} 1`,
		// Labelled by the route pattern, never the raw path with its ids.
		`agentline_http_requests_total{method="GET",route="GET /api/agents/{agent_id}",status="401"} 1`,
		`agentline_http_requests_total{method="GET",route="/",status="404"} 1`,
		// Invented methods share one label value.
		`agentline_http_requests_total{method="OTHER",route="/",status="404"} 1`,
		`agentline_http_request_duration_seconds_bucket{route="GET /healthz",le="0.005"}`,
		`agentline_http_request_duration_seconds_count{route="GET /healthz"} 1`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, "/api/agents/7") || strings.Contains(body, "BREW") {
		t.Error("metrics hold a raw path or method")
	}
}

// /metrics is served on the metrics listener only: on the public address
// it is a path like any unknown one; with AGENTLINE_METRICS_ADDR=off there
// is no metrics listener at all.
func TestMetricsAreNotPublic(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	if r := s.Do(t, "GET", "/metrics", "", nil); r.Status != 404 || r.ErrorCode() != agentline.ENotFound || strings.Contains(string(r.Body), "go_goroutines") {
		t.Fatalf("GET /metrics on the public address = %s, want 404", r)
	}
	if body := s.Metrics(t); !strings.Contains(body, "# TYPE agentline_http_requests_total counter") {
		t.Fatalf("metrics listener: %.300s", body)
	}
	res, err := s.Client.Get(s.MetricsURL + "/healthz")
	if err != nil || res.StatusCode != 404 {
		t.Fatalf("metrics listener serves more than /metrics: %v %v", res, err)
	}
	res.Body.Close()
	off := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_METRICS_ADDR": "off"})
	if off.MetricsURL != "" {
		t.Fatalf("metrics off, yet a listener at %s", off.MetricsURL)
	}
	if r := off.Do(t, "GET", "/metrics", "", nil); r.Status != 404 {
		t.Fatalf("GET /metrics with metrics off = %s", r)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	generated := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for _, tc := range []struct{ sent, want string }{
		{"abc-123.X_y", "abc-123.X_y"},
		{"", ""},
		{"has space", ""},
		{"<script>", ""},
		{strings.Repeat("a", 65), ""},
	} {
		req := s.Request(t, "GET", "/healthz", "", nil)
		if tc.sent != "" {
			req.Header.Set("X-Request-Id", tc.sent)
		}
		got := s.Send(t, req).Header.Get("X-Request-Id")
		if tc.want != "" && got != tc.want {
			t.Errorf("sent %q, got %q: a sane id is echoed", tc.sent, got)
		}
		if tc.want == "" && !generated.MatchString(got) {
			t.Errorf("sent %q, got %q: want a generated id", tc.sent, got)
		}
	}
}

func TestUnknownPathIsJSON404(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	for _, path := range []string{"/nope", "/api/nope", "/api/projects/1/nope", "/api/agents"} {
		r := s.Do(t, "GET", path, "", nil)
		if r.Status != 404 || r.ErrorCode() != agentline.ENotFound || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s = %s %q", path, r, r.Header.Get("Content-Type"))
		}
	}
}

// Over a real connection, a body over the limit is refused with a JSON 413
// while the client is still sending it.
func TestTooLargeBodyOverTheNetwork(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	_, token := s.NewUser(t, "ann@example.com")
	r := s.Do(t, "POST", "/api/projects", token, tooLarge)
	if r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode() != agentline.ETooLarge {
		t.Fatalf("2 MiB body = %s, want 413 too_large", r)
	}
	// The server still serves afterwards.
	s.Must(t, 201, "POST", "/api/projects", token, map[string]string{"name": "small"}, nil)
}

// A known path asked with a method it has no route for answers 405 with the
// methods it does have; a path nobody serves stays 404.
func TestWrongMethodAndUnknownPath(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	tests := []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"DELETE", "/api/projects", 405, agentline.EMethodNotAllowed, "GET, POST"},
		{"PUT", "/api/agents/7", 405, agentline.EMethodNotAllowed, "GET, PATCH, DELETE"},
		{"POST", "/healthz", 405, agentline.EMethodNotAllowed, "GET"},
		{"POST", "/", 405, agentline.EMethodNotAllowed, "GET"},
		{"GET", "/api/nothing-here", 404, agentline.ENotFound, ""},
		{"POST", "/widget/v2/config", 404, agentline.ENotFound, ""},
	}
	for _, tc := range tests {
		r := s.Do(t, tc.method, tc.path, "", nil)
		if r.Status != tc.status || r.ErrorCode() != tc.code || r.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s = %s (Allow %q), want %d %s (Allow %q)", tc.method, tc.path, r, r.Header.Get("Allow"), tc.status, tc.code, tc.allow)
		}
	}
}

// A body whose declared Content-Length is over the limit is refused with 413
// before it is read, malformed or not, signed in or not; a smaller malformed
// body is still a 400 that names the problem.
func TestDeclaredLengthOverTheLimit(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	_, token := s.NewUser(t, "ann@example.com")
	malformed := append([]byte(`{"name": `), bytes.Repeat([]byte("!"), 3<<20)...)
	for _, tok := range []string{token, ""} {
		r := s.Do(t, "POST", "/api/projects", tok, malformed)
		if r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode() != agentline.ETooLarge || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("3 MB malformed body (token %t) = %s, want 413 too_large", tok != "", r)
		}
	}
	if r := s.Do(t, "POST", "/api/projects", token, malformed[:1000]); r.Status != 400 || r.ErrorCode() != agentline.EInvalid {
		t.Fatalf("small malformed body = %s, want 400", r)
	}
}
