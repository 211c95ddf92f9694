package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// env is a running management API over a fresh database: an owner and a
// viewer of one project with an agent, and a second project (with its own
// agent) that neither of them belongs to.
type env struct {
	db          *store.DB
	srv         *httptest.Server
	owner       string // session tokens
	viewer      string
	agent       agentline.Agent
	otherAgent  agentline.Agent
	facility    *Facility
	registry    *prometheus.Registry
	maxBodySize int64
}

func newEnv(t *testing.T, db *store.DB) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{db: db, registry: prometheus.NewRegistry(), maxBodySize: 4 << 20}
	svc := auth.New(db, time.Hour)
	// Users and session tokens straight in the store: bcrypt would make
	// every test environment take seconds under -race.
	login := func(email string) (agentline.User, string) {
		u, err := db.CreateUser(ctx, email, "unused-hash")
		if err != nil {
			t.Fatal(err)
		}
		token, _ := auth.NewToken("als_")
		if err := db.CreateAuthSession(ctx, u.ID, auth.HashToken(token), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		return u, token
	}
	owner, ownerToken := login("owner@example.com")
	_, viewerToken := login("viewer@example.com")
	stranger, _ := login("stranger@example.com")
	e.owner, e.viewer = ownerToken, viewerToken
	p, err := db.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.SetMember(ctx, p.ID, "viewer@example.com", agentline.RoleViewer); err != nil {
		t.Fatal(err)
	}
	other, _ := db.CreateProject(ctx, agentline.Project{Name: "other"}, stranger.ID)
	mk := func(projectID int64, name string) agentline.Agent {
		a := agentline.Agent{ProjectID: projectID, Name: name, Language: "en-US"}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		a, err := db.CreateAgent(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	e.agent, e.otherAgent = mk(p.ID, "Ada"), mk(other.ID, "Eve")
	e.facility = New(db, Options{AllowPrivateWebhooks: true, Registerer: e.registry, Logger: quiet})

	mux := http.NewServeMux()
	for _, r := range NewHandler(db, svc, false).Routes() {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	e.srv = httptest.NewServer(httpx.NewEdge(quiet, e.maxBodySize, prometheus.NewRegistry()).Wrap(mux))
	t.Cleanup(e.srv.Close)
	return e
}

// do sends a request with a JSON body (or raw bytes, or nothing) and returns
// the status and body.
func (e *env) do(t *testing.T, token, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return e.send(t, req)
}

func (e *env) send(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// addTool stores a webhook tool for the agent directly, its URL checked as
// with private webhooks allowed: the guard's tests store internal
// addresses, as a tool saved before the policy, or a name that later
// points inside, would hold them.
func (e *env) addTool(t *testing.T, a agentline.Agent, tool agentline.WebhookTool) agentline.WebhookTool {
	t.Helper()
	tool.ProjectID, tool.AgentID = a.ProjectID, a.ID
	if err := validateTool(&tool, true); err != nil {
		t.Fatal(err)
	}
	tool, err := e.db.CreateTool(context.Background(), tool)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// errorCode is the code of a tool error output, or "".
func errorCode(t *testing.T, r agentline.ToolResult) string {
	t.Helper()
	if !r.IsError {
		return ""
	}
	var out struct {
		Error toolError `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.Output), &out); err != nil {
		t.Fatalf("error output is not JSON: %q", r.Output)
	}
	if out.Error.Message == "" {
		t.Fatalf("error output without a message: %q", r.Output)
	}
	return out.Error.Code
}
