package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// clock is a settable time for the service.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const ttl = time.Hour

// server serves the auth routes of a Service on a real store behind the
// HTTP edge, on loopback.
type server struct {
	*httptest.Server
	svc   *auth.Service
	clock *clock
}

func newServer(t *testing.T, db *store.DB) *server {
	t.Helper()
	c := &clock{now: time.Now()}
	svc := auth.New(db, ttl, auth.WithPasswordCost(bcrypt.MinCost), auth.WithClock(c.Now))
	mux := http.NewServeMux()
	for _, r := range auth.NewHandler(svc, auth.Features{TelephonyEnabled: true}).Routes() {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	edge := httpx.NewEdge(slog.New(slog.NewTextHandler(io.Discard, nil)), 1<<20, prometheus.NewRegistry())
	s := &server{Server: httptest.NewServer(edge.Wrap(mux)), svc: svc, clock: c}
	t.Cleanup(s.Close)
	return s
}

type answer struct {
	status     int
	retryAfter string
	body       map[string]any
	raw        string
}

func (a answer) code() string {
	e, _ := a.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (a answer) message() string {
	e, _ := a.body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func (s *server) do(t *testing.T, method, path, token, body string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), raw: string(raw)}
	json.Unmarshal(raw, &a.body)
	return a
}

func (s *server) login(t *testing.T, email, password string) answer {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"email": email, "password": password})
	return s.do(t, "POST", "/api/auth/login", "", string(b))
}

func (s *server) mustUser(t *testing.T, email, password string) agentline.User {
	t.Helper()
	u, err := s.svc.CreateUser(context.Background(), email, password)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestLoginMeLogout(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		s := newServer(t, db)
		u := s.mustUser(t, "Ann@Example.com", "s3cret-pass")

		a := s.login(t, "ANN@example.COM", "s3cret-pass")
		if a.status != 200 {
			t.Fatalf("login = %d %s", a.status, a.raw)
		}
		token, _ := a.body["token"].(string)
		if !strings.HasPrefix(token, "als_") || len(token) < 40 {
			t.Fatalf("token = %q", token)
		}
		exp, err := time.Parse(time.RFC3339, a.body["expires_at"].(string))
		if err != nil || exp.Sub(s.clock.Now()) > ttl || exp.Sub(s.clock.Now()) < ttl-2*time.Second {
			t.Fatalf("expires_at = %v (%v), want now + %v", a.body["expires_at"], err, ttl)
		}
		if user := a.body["user"].(map[string]any); user["email"] != "ann@example.com" || int64(user["id"].(float64)) != u.ID {
			t.Fatalf("user = %v", user)
		}

		me := s.do(t, "GET", "/api/me", token, "")
		if me.status != 200 || !strings.Contains(me.raw, `"email":"ann@example.com"`) || !strings.Contains(me.raw, `"telephony_enabled":true`) {
			t.Fatalf("me = %d %s", me.status, me.raw)
		}
		// The token is stored only as its hash.
		if _, err := db.UserByTokenHash(context.Background(), token); err == nil {
			t.Fatal("the raw token finds a session: tokens must be stored hashed")
		}

		if a := s.do(t, "POST", "/api/auth/logout", token, ""); a.status != 204 {
			t.Fatalf("logout = %d %s", a.status, a.raw)
		}
		for _, path := range []string{"/api/me", "/api/auth/logout"} {
			method := map[string]string{"/api/me": "GET", "/api/auth/logout": "POST"}[path]
			if a := s.do(t, method, path, token, ""); a.status != 401 || a.code() != agentline.EUnauthorized {
				t.Fatalf("%s after logout = %d %s", path, a.status, a.raw)
			}
		}
	})
}

func TestBadTokens(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		s := newServer(t, db)
		for _, h := range []string{"", "Bearer", "Bearer ", "Basic abc", "Bearer als_nope", "bearer " + strings.Repeat("x", 5000)} {
			req, _ := http.NewRequest("GET", s.URL+"/api/me", nil)
			if h != "" {
				req.Header.Set("Authorization", h)
			}
			res, err := s.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 401 {
				t.Errorf("Authorization %.20q = %d, want 401", h, res.StatusCode)
			}
		}
	})
}

// A session started more than its lifetime ago is refused.
func TestExpiredTokenIs401(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		s := newServer(t, db)
		s.mustUser(t, "ann@example.com", "s3cret-pass")
		s.clock.Add(-ttl - time.Minute) // sign in "an hour and a minute ago"
		a := s.login(t, "ann@example.com", "s3cret-pass")
		if a.status != 200 {
			t.Fatalf("login = %d %s", a.status, a.raw)
		}
		me := s.do(t, "GET", "/api/me", a.body["token"].(string), "")
		if me.status != 401 || me.code() != agentline.EUnauthorized || !strings.Contains(me.message(), "expired") {
			t.Fatalf("expired token: %d %s", me.status, me.raw)
		}
	})
}

// A wrong password and an unknown email look exactly the same.
func TestFailedLoginSaysNothingMore(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		s := newServer(t, db)
		s.mustUser(t, "ann@example.com", "s3cret-pass")
		wrong := s.login(t, "ann@example.com", "wrong-pass")
		unknown := s.login(t, "bob@example.com", "s3cret-pass")
		for _, a := range []answer{wrong, unknown} {
			if a.status != 401 || a.code() != agentline.EUnauthorized {
				t.Fatalf("failed login = %d %s", a.status, a.raw)
			}
		}
		if wrong.raw != unknown.raw {
			t.Fatalf("answers differ:\n%s\n%s", wrong.raw, unknown.raw)
		}
		for _, tc := range []struct{ body, field string }{
			{`{"password": "x"}`, "email"},
			{`{"email": "ann@example.com"}`, "password"},
			{`{"email": "ann@example.com", "password": "x", "remember": true}`, "remember"},
			{`{"email": 1, "password": "x"}`, "email"},
		} {
			a := s.do(t, "POST", "/api/auth/login", "", tc.body)
			e, _ := a.body["error"].(map[string]any)
			if a.status != 400 || e["field"] != tc.field {
				t.Errorf("%s = %d %s, want 400 naming %s", tc.body, a.status, a.raw, tc.field)
			}
		}
	})
}

// Repeated failures for one email are refused with 429 and Retry-After,
// even with the right password, until the window passes.
func TestThrottlePerEmail(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		s := newServer(t, db)
		s.mustUser(t, "ann@example.com", "s3cret-pass")
		for i := range 5 {
			if a := s.login(t, "Ann@example.com", "wrong-pass"); a.status != 401 {
				t.Fatalf("failure %d = %d %s", i+1, a.status, a.raw)
			}
		}
		a := s.login(t, "ann@example.com", "s3cret-pass")
		if a.status != 429 || a.code() != agentline.ERateLimited {
			t.Fatalf("after 5 failures = %d %s, want 429", a.status, a.raw)
		}
		wait, err := strconv.Atoi(a.retryAfter)
		if err != nil || wait < 14*60 || wait > 15*60+1 {
			t.Fatalf("Retry-After = %q, want about 15 minutes in seconds", a.retryAfter)
		}
		// Another account from the same address is not locked out.
		s.mustUser(t, "bob@example.com", "bobs-password")
		if a := s.login(t, "bob@example.com", "bobs-password"); a.status != 200 {
			t.Fatalf("other email = %d %s", a.status, a.raw)
		}
		s.clock.Add(time.Duration(wait) * time.Second)
		if a := s.login(t, "ann@example.com", "s3cret-pass"); a.status != 200 {
			t.Fatalf("after Retry-After = %d %s", a.status, a.raw)
		}
	})
}

// Failures spread over many emails from one address are refused too.
func TestThrottlePerIP(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		s := newServer(t, db)
		s.mustUser(t, "ann@example.com", "s3cret-pass")
		for i := range 20 {
			if a := s.login(t, "guess"+strconv.Itoa(i)+"@example.com", "x"); a.status != 401 {
				t.Fatalf("failure %d = %d %s", i+1, a.status, a.raw)
			}
		}
		a := s.login(t, "ann@example.com", "s3cret-pass")
		if a.status != 429 || a.code() != agentline.ERateLimited || a.retryAfter == "" {
			t.Fatalf("after 20 failures from one IP = %d %q %s, want 429 with Retry-After", a.status, a.retryAfter, a.raw)
		}
		s.clock.Add(15 * time.Minute)
		if a := s.login(t, "ann@example.com", "s3cret-pass"); a.status != 200 {
			t.Fatalf("after the window = %d %s", a.status, a.raw)
		}
	})
}

func TestCreateUser(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		svc := auth.New(db, ttl, auth.WithPasswordCost(bcrypt.MinCost))
		ctx := context.Background()
		u, err := svc.CreateUser(ctx, "Ann@Example.com", "s3cret-pass")
		if err != nil || u.Email != "ann@example.com" {
			t.Fatalf("CreateUser = %+v %v", u, err)
		}
		for _, tc := range []struct{ email, password, code, field string }{
			{"ANN@example.COM", "another-pass", agentline.EConflict, ""},
			{"not an email", "s3cret-pass", agentline.EInvalid, "email"},
			{"Ann <ann2@example.com>", "s3cret-pass", agentline.EInvalid, "email"},
			{"", "s3cret-pass", agentline.EInvalid, "email"},
			{"new@example.com", "short", agentline.EInvalid, "password"},
			{"new@example.com", strings.Repeat("p", 73), agentline.EInvalid, "password"},
		} {
			_, err := svc.CreateUser(ctx, tc.email, tc.password)
			var e *agentline.Error
			if agentline.ErrorCode(err) != tc.code || (tc.field != "" && (!errors.As(err, &e) || e.Field != tc.field)) {
				t.Errorf("CreateUser(%q, %d chars) = %v, want %s %s", tc.email, len(tc.password), err, tc.code, tc.field)
			}
		}
	})
}

// Authorize is the one place roles become decisions: non-members get 404,
// members without the permission 403.
func TestAuthorize(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		svc := auth.New(db, ttl, auth.WithPasswordCost(bcrypt.MinCost))
		users := map[agentline.Role]agentline.User{}
		for _, r := range []agentline.Role{agentline.RoleOwner, agentline.RoleEditor, agentline.RoleViewer, "none"} {
			u, err := svc.CreateUser(ctx, string(r)+"@example.com", "s3cret-pass")
			if err != nil {
				t.Fatal(err)
			}
			users[r] = u
		}
		p, err := db.CreateProject(ctx, agentline.Project{Name: "p"}, users[agentline.RoleOwner].ID)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMember(ctx, p.ID, "editor@example.com", agentline.RoleEditor)
		db.SetMember(ctx, p.ID, "viewer@example.com", agentline.RoleViewer)
		want := map[agentline.Role]map[agentline.Permission]string{
			agentline.RoleOwner:  {agentline.PermView: "", agentline.PermCreate: "", agentline.PermDelete: ""},
			agentline.RoleEditor: {agentline.PermView: "", agentline.PermCreate: "", agentline.PermDelete: agentline.EForbidden},
			agentline.RoleViewer: {agentline.PermView: "", agentline.PermCreate: agentline.EForbidden, agentline.PermDelete: agentline.EForbidden},
			"none":               {agentline.PermView: agentline.ENotFound, agentline.PermCreate: agentline.ENotFound, agentline.PermDelete: agentline.ENotFound},
		}
		for role, perms := range want {
			for perm, code := range perms {
				_, err := svc.Authorize(auth.WithUser(ctx, users[role]), p.ID, perm)
				if agentline.ErrorCode(err) != code {
					t.Errorf("%s %s: %v, want %q", role, perm, err, code)
				}
			}
		}
		// Refusals say who may, in words people use.
		for _, c := range []struct {
			role agentline.Role
			perm agentline.Permission
			want string
		}{
			{agentline.RoleEditor, agentline.PermDelete, "Only owners can delete in this project; you are an editor."},
			{agentline.RoleViewer, agentline.PermDelete, "Only owners can delete in this project; you are a viewer."},
			{agentline.RoleViewer, agentline.PermCreate, "Viewers can only read; creating and changing needs an editor or owner role."},
		} {
			_, err := svc.Authorize(auth.WithUser(ctx, users[c.role]), p.ID, c.perm)
			if msg := agentline.ErrorMessage(err); msg != c.want {
				t.Errorf("%s %s refused with %q, want %q", c.role, c.perm, msg, c.want)
			}
		}
		if _, err := svc.Authorize(ctx, p.ID, agentline.PermView); agentline.ErrorCode(err) != agentline.EUnauthorized {
			t.Errorf("no user: %v", err)
		}
	})
}
