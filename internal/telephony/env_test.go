package telephony_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

const botHost = "bot.example.test"

// env is a running agentline (temp SQLite, real HTTP stack) whose carrier
// is a fake Twilio on loopback, with a project, its members and agents, and
// an outsider with a project of their own.
type env struct {
	t    testing.TB
	app  *app.App
	srv  *httptest.Server
	fake *twiliofake.Fake

	owner, editor, viewer, outsider string // session tokens
	project, otherProject           int64
	ada, bob, gemini, eve           int64 // agents: ada, bob and gemini in project; eve in otherProject
}

func newEnv(t testing.TB, settings map[string]string) *env {
	t.Helper()
	e := &env{t: t, fake: twiliofake.New(twiliofake.Options{})}
	t.Cleanup(e.fake.Close)
	vars := map[string]string{
		"AGENTLINE_DATABASE_URL":   "sqlite:" + filepath.Join(t.TempDir(), "test.db"),
		"AGENTLINE_ADMIN_EMAIL":    "owner@example.com",
		"AGENTLINE_ADMIN_PASSWORD": "owner-password",
		"TELEPHONY_ENABLED":        "true",
		"BOT_HOST":                 botHost,
		"TWILIO_ACCOUNT_SID":       e.fake.AccountSID(),
		"TWILIO_AUTH_TOKEN":        e.fake.AuthToken(),
		"TWILIO_API_BASE_URL":      e.fake.URL(),
		"OPENAI_API_KEY":           "sk-test",
	}
	for k, v := range settings {
		vars[k] = v
	}
	cfg, err := config.Load(nil, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	e.app = a
	e.srv = httptest.NewServer(a.Handler())
	t.Cleanup(e.srv.Close)

	owner, _, err := a.Store.UserByEmail(ctx, "owner@example.com")
	if err != nil {
		t.Fatal(err)
	}
	e.owner = e.session(owner)
	e.editor = e.session(e.user("editor@example.com"))
	e.viewer = e.session(e.user("viewer@example.com"))
	outsider := e.user("outsider@example.com")
	e.outsider = e.session(outsider)

	p, err := a.Store.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.project = p.ID
	for email, role := range map[string]agentline.Role{"editor@example.com": agentline.RoleEditor, "viewer@example.com": agentline.RoleViewer} {
		if _, _, err := a.Store.SetMember(ctx, p.ID, email, role); err != nil {
			t.Fatal(err)
		}
	}
	other, _ := a.Store.CreateProject(ctx, agentline.Project{Name: "other"}, outsider.ID)
	e.otherProject = other.ID
	e.ada = e.agent(p.ID, "Ada", "gpt-realtime")
	e.bob = e.agent(p.ID, "Bob", "gpt-realtime-mini")
	e.gemini = e.agent(p.ID, "Gem", "gemini-2.5-flash-native-audio")
	e.eve = e.agent(other.ID, "Eve", "gpt-realtime")
	return e
}

func (e *env) user(email string) agentline.User {
	u, err := e.app.Store.CreateUser(context.Background(), email, "unused-hash")
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

func (e *env) session(u agentline.User) string {
	tok, _ := auth.NewToken("als_")
	if err := e.app.Store.CreateAuthSession(context.Background(), u.ID, auth.HashToken(tok), time.Now().Add(time.Hour)); err != nil {
		e.t.Fatal(err)
	}
	return tok
}

func (e *env) agent(projectID int64, name, model string) int64 {
	a := agentline.Agent{ProjectID: projectID, Name: name, Model: model}
	if err := a.Validate(); err != nil {
		e.t.Fatal(err)
	}
	a, err := e.app.Store.CreateAgent(context.Background(), a)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.ID
}

// response is an answer: its status, headers and body.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(v any) {
	if err := json.Unmarshal(r.body, v); err != nil {
		panic(fmt.Sprintf("body %s: %v", r.body, err))
	}
}

func (r response) errorCode() string {
	var b struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(r.body, &b)
	return b.Error.Code
}

// do sends a request with a bearer token (none when empty) and a JSON body
// (none when nil; a string is sent as it is).
func (e *env) do(token, method, path string, body any) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

// postForm sends a carrier webhook, signed with token when it is not empty.
func (e *env) postForm(path string, form url.Values, signWith string) response {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if signWith != "" {
		req.Header.Set("X-Twilio-Signature", twiliofake.Sign(signWith, "https://"+botHost+path, form))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

// check is one row of an API scenario table: who asks what, and what the
// answer must be.
type check struct {
	name   string
	token  string
	method string
	path   string
	body   any
	status int
	code   string // error code, for error answers
	has    string // a substring the body must contain
}

func (e *env) run(checks []check) {
	e.t.Helper()
	for _, c := range checks {
		res := e.do(c.token, c.method, c.path, c.body)
		if res.status != c.status {
			e.t.Errorf("%s: %s %s = %d %s, want %d", c.name, c.method, c.path, res.status, res.body, c.status)
			continue
		}
		if c.code != "" && res.errorCode() != c.code {
			e.t.Errorf("%s: error code %q, want %q (%s)", c.name, res.errorCode(), c.code, res.body)
		}
		if c.has != "" && !strings.Contains(string(res.body), c.has) {
			e.t.Errorf("%s: body %s does not contain %q", c.name, res.body, c.has)
		}
	}
}

// provision buys a number for an agent through the API.
func (e *env) provision(phone string, agentID int64) agentline.PhoneNumber {
	e.t.Helper()
	res := e.do(e.owner, "POST", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), map[string]any{"phone_number": phone, "agent_id": agentID})
	if res.status != http.StatusCreated {
		e.t.Fatalf("provision %s: %d %s", phone, res.status, res.body)
	}
	var n agentline.PhoneNumber
	res.json(&n)
	return n
}

func verifyToken(e *env, token string, agentID int64) (streamtoken.Claims, error) {
	return streamtoken.Verify(e.app.Secret, token, agentID, time.Now())
}

// newEnvNoUsers starts the app alone, for tests that only need its routes.
func newEnvNoUsers(t *testing.T) *app.App {
	cfg, err := config.Load(nil, func(k string) string {
		return map[string]string{"AGENTLINE_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "test.db"), "AGENTLINE_ADMIN_EMAIL": "o@example.com", "AGENTLINE_ADMIN_PASSWORD": "owner-password"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
