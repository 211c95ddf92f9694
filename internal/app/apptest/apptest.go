// Package apptest starts a whole agentline (app.New + Run on a loopback
// listener) for end-to-end tests, and speaks JSON to it. Every package's
// end-to-end tests use it, so they all exercise the real middleware, routes
// and database:
//
//	func TestMain(m *testing.M) { storetest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		s := apptest.StartFresh(t, store.SQLite, nil)
//		_, token := s.NewUser(t, "ann@example.com")
//		var p agentline.Project
//		s.Must(t, 201, "POST", "/api/projects", token, map[string]string{"name": "Shop"}, &p)
//	}
package apptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Config returns the settings of a test instance on databaseURL: the
// defaults, then env (names as in DESIGN.md), with the cheapest bcrypt cost
// so that sign-ins stay fast under -race, and no drain, so that Stop ends
// live calls at once (tests of draining set AGENTLINE_DRAIN_TIMEOUT), and
// metrics on a port of their own (Server.MetricsURL).
func Config(t testing.TB, databaseURL string, env map[string]string) config.Config {
	t.Helper()
	vars := map[string]string{
		"AGENTLINE_DATABASE_URL":  databaseURL,
		"AGENTLINE_PASSWORD_COST": "4",
		"AGENTLINE_DRAIN_TIMEOUT": "0s",
		// Never a fixed port: instances of parallel tests would collide.
		"AGENTLINE_METRICS_ADDR": "127.0.0.1:0",
		// Recordings of a test's calls stay in the test's own directory
		// (on PostgreSQL the default would be the working directory).
		"AGENTLINE_RECORDINGS_DIR": t.TempDir(),
		// A key of the test's own: on PostgreSQL, development would
		// otherwise keep its key in the working directory.
		"AGENTLINE_ENCRYPTION_KEY": testEncryptionKey(t),
	}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.Load(nil, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// StartFresh starts an app on a fresh database of dialect d (a temp SQLite
// file, or a new database in the package's throwaway PostgreSQL cluster; the
// package's TestMain must call storetest.Main), with settings from env.
func StartFresh(t testing.TB, d storetest.Dialect, env map[string]string) *Server {
	t.Helper()
	return Start(t, Config(t, storetest.URL(t, d), env))
}

// Server is a running agentline on 127.0.0.1.
type Server struct {
	URL string // http://127.0.0.1:PORT
	// MetricsURL is the base URL of the metrics listener, or "" when
	// AGENTLINE_METRICS_ADDR is off.
	MetricsURL string
	App        *app.App
	Stdout     *Buffer // what the app printed on stdout (first-start credentials)
	Client     *http.Client

	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

// Start runs an App with cfg on a fresh loopback port; it stops when the
// test ends, and the test fails if Run does not return nil (a graceful
// shutdown).
func Start(t testing.TB, cfg config.Config) *Server {
	t.Helper()
	return StartAt(t, cfg, "127.0.0.1:0")
}

// StartAt is Start listening on addr: a test restarts a stopped server at
// its address (Server.Addr), as a deployment restarts behind the same URL.
func StartAt(t testing.TB, cfg config.Config, addr string) *Server {
	t.Helper()
	return start(t, cfg, addr, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// StartLogged is Start with every log line, debug included, written to w
// as JSON: tests that read what the app logs.
func StartLogged(t testing.TB, cfg config.Config, w io.Writer) *Server {
	t.Helper()
	return start(t, cfg, "127.0.0.1:0", slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})))
}

func start(t testing.TB, cfg config.Config, addr string, logger *slog.Logger) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = ln.Addr().String()
	s := &Server{URL: "http://" + cfg.Addr, Stdout: &Buffer{}, Client: &http.Client{Timeout: 30 * time.Second}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, logger, s.Stdout)
	if err != nil {
		cancel()
		ln.Close()
		t.Fatalf("app.New: %v", err)
	}
	s.App, s.cancel = a, cancel
	var metrics net.Listener
	if cfg.MetricsEnabled() {
		if metrics, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		s.MetricsURL = "http://" + metrics.Addr().String()
	}
	go func() { s.done <- a.Serve(ctx, ln, metrics) }()
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// Stop shuts the server down gracefully and closes its database; calling it
// again does nothing.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.stopped {
		return
	}
	s.stopped = true
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Run returned %v, want nil after a graceful shutdown", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("Run did not return within 30s of cancel")
	}
	s.Client.CloseIdleConnections()
	if err := s.App.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// Metrics scrapes GET /metrics from the metrics listener and returns the
// Prometheus text.
func (s *Server) Metrics(t testing.TB) string {
	t.Helper()
	if s.MetricsURL == "" {
		t.Fatal("metrics are off (AGENTLINE_METRICS_ADDR)")
	}
	res, err := s.Client.Get(s.MetricsURL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics = %d %q (%v)", res.StatusCode, res.Header.Get("Content-Type"), err)
	}
	return string(b)
}

// Response is a whole answer, body read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("answer %d is not JSON (%v): %.300s", r.Status, err, r.Body)
	}
}

// ErrorCode is the error.code of an error answer, or "".
func (r *Response) ErrorCode() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(r.Body, &e)
	return e.Error.Code
}

func (r *Response) String() string {
	return fmt.Sprintf("%d %.300s", r.Status, bytes.TrimSpace(r.Body))
}

// Request builds a request to path (relative to the server) with an
// optional bearer token. body is sent as is when it is a string or []byte,
// else as JSON; nil sends no body.
func (s *Server) Request(t testing.TB, method, path, token string, body any) *http.Request {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// Send sends req over the network and reads the whole answer.
func (s *Server) Send(t testing.TB, req *http.Request) *Response {
	t.Helper()
	res, err := s.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Do sends one request; see Request for token and body.
func (s *Server) Do(t testing.TB, method, path, token string, body any) *Response {
	t.Helper()
	return s.Send(t, s.Request(t, method, path, token, body))
}

// Must sends one request and fails the test unless the status is want; it
// decodes a JSON answer into out when out is not nil.
func (s *Server) Must(t testing.TB, want int, method, path, token string, body, out any) *Response {
	t.Helper()
	r := s.Do(t, method, path, token, body)
	if r.Status != want {
		t.Fatalf("%s %s = %s, want %d", method, path, r, want)
	}
	if out != nil {
		r.JSON(t, out)
	}
	return r
}

// Login signs in over HTTP and returns the session token.
func (s *Server) Login(t testing.TB, email, password string) string {
	t.Helper()
	var out auth.Login
	s.Must(t, http.StatusOK, "POST", "/api/auth/login", "", map[string]string{"email": email, "password": password}, &out)
	if out.Token == "" {
		t.Fatalf("login of %s gave no token", email)
	}
	return out.Token
}

// AdminEmail is the first account of a test instance whose env names no
// other: an instance administrator.
const AdminEmail = "admin@localhost"

// AdminPassword is the first account's password, as its first start
// printed it.
func (s *Server) AdminPassword(t testing.TB) string {
	t.Helper()
	_, password, ok := FirstCredentials(s.Stdout.String())
	if !ok {
		t.Fatalf("the first start printed no credentials: %q", s.Stdout.String())
	}
	return password
}

// Admin signs the first account in and returns its session token.
func (s *Server) Admin(t testing.TB) string {
	t.Helper()
	return s.Login(t, AdminEmail, s.AdminPassword(t))
}

// Password is the password of every user NewUser makes.
const Password = "correct horse battery"

// NewUser creates an account with Password and signs it in over HTTP.
func (s *Server) NewUser(t testing.TB, email string) (agentline.User, string) {
	t.Helper()
	u, err := s.App.Auth.CreateUser(context.Background(), email, Password)
	if err != nil {
		t.Fatalf("create user %s: %v", email, err)
	}
	return u, s.Login(t, email, Password)
}

// Join adds the account of memberTok (whose email is email) to the
// project with role the one way there is: the owner (ownerTok) invites,
// the invitee accepts signed in. It needs a server without mail, whose
// invitations answer with their token.
func (s *Server) Join(t testing.TB, ownerTok string, projectID int64, memberTok, email string, role agentline.Role) {
	t.Helper()
	var inv agentline.Invite
	s.Must(t, http.StatusCreated, "POST", fmt.Sprintf("/api/projects/%d/invites", projectID), ownerTok,
		map[string]string{"email": email, "role": string(role)}, &inv)
	if inv.Token == "" {
		t.Fatalf("the invitation for %s has no token (is mail on?)", email)
	}
	s.Must(t, http.StatusOK, "POST", "/api/invites/accept", memberTok, map[string]string{"token": inv.Token}, nil)
}

// Token starts a session for the user directly in the store, without a
// bcrypt comparison: for tests that need many tokens.
func (s *Server) Token(t testing.TB, userID int64) string {
	t.Helper()
	tok, err := auth.NewToken("als_")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.App.Store.CreateAuthSession(context.Background(), userID, auth.HashToken(tok), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return tok
}

var credentialLine = regexp.MustCompile(`(?m)^\s*(email|password):\s*(\S+)\s*$`)

// FirstCredentials finds the generated first-start account in what the app
// printed. ok is false when nothing was printed.
func FirstCredentials(stdout string) (email, password string, ok bool) {
	for _, m := range credentialLine.FindAllStringSubmatch(stdout, -1) {
		if m[1] == "email" {
			email = m[2]
		} else {
			password = m[2]
		}
	}
	return email, password, email != "" && password != ""
}

// Buffer is a bytes.Buffer safe for the app and the test to share.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testEncryptionKey is a random AGENTLINE_ENCRYPTION_KEY.
func testEncryptionKey(t testing.TB) string {
	k := make([]byte, agentline.EncryptionKeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k)
}
