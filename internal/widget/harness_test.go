package widget_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/provider"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/ratelimit"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/widget"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// countingStore is the real store that counts the reads the public API's
// hot path would make, to prove they are served from memory.
type countingStore struct {
	*store.DB
	keyLookups, configReads, touches atomic.Int64
}

func (s *countingStore) WidgetKeyByHash(ctx context.Context, hash string) (agentline.WidgetKey, error) {
	s.keyLookups.Add(1)
	return s.DB.WidgetKeyByHash(ctx, hash)
}

func (s *countingStore) Project(ctx context.Context, id int64) (agentline.Project, error) {
	s.configReads.Add(1)
	return s.DB.Project(ctx, id)
}

func (s *countingStore) TouchWidgetKey(ctx context.Context, id int64, at time.Time) error {
	s.touches.Add(1)
	return s.DB.TouchWidgetKey(ctx, id, at)
}

// fakeTools stands in for the tool facility: one tool, lookup_order, that
// echoes its arguments.
type fakeTools struct {
	mu          sync.Mutex
	calls       []agentline.ToolCall
	definitions atomic.Int64 // Definitions calls (the real facility's cost 2 statements)
}

func (f *fakeTools) Definitions(ctx context.Context, a agentline.Agent) ([]agentline.ToolDefinition, error) {
	f.definitions.Add(1)
	return []agentline.ToolDefinition{{Name: "lookup_order", Description: "Find an order by id",
		Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)}}, nil
}

func (f *fakeTools) received() []agentline.ToolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agentline.ToolCall(nil), f.calls...)
}

func (f *fakeTools) Execute(ctx context.Context, a agentline.Agent, call agentline.ToolCall) (agentline.ToolResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	if call.Name != "lookup_order" {
		return agentline.ToolResult{}, agentline.Invalid("name", "agent has no tool %q", call.Name)
	}
	return agentline.ToolResult{CallID: call.CallID, Output: "order " + string(call.Arguments) + " shipped"}, nil
}

// env is one agentline instance serving the widget routes over loopback,
// with a fake provider, plus the data tests start from.
type env struct {
	t        testing.TB
	db       *store.DB
	counting *countingStore
	srv      *httptest.Server
	fake     *providerfake.Fake
	// fakeURL is the fake provider's base URL.
	fakeURL string
	tools   *fakeTools
	auth    *auth.Service

	owner, viewer   string // session tokens
	project, other  agentline.Project
	agent, gemini   agentline.Agent
	otherAgent      agentline.Agent
	channel, second agentline.Channel
	key, secondKey  string
}

type envOptions struct {
	db       *store.DB
	limiter  ratelimit.Limiter
	cacheTTL time.Duration
	noTools  bool
	noKeys   bool
	// noProviderKeys starts the instance without OPENAI_API_KEY and
	// GEMINI_API_KEY.
	noProviderKeys bool
	// extra routes are served too, behind the same middleware.
	extra []httpx.Route
	// publicURL is AGENTLINE_PUBLIC_URL.
	publicURL string
}

// newServer starts an instance on db (a fresh SQLite one when nil).
func newServer(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, db: o.db, tools: &fakeTools{}}
	if e.db == nil {
		e.db = storetest.Open(t, store.SQLite)
	}
	e.counting = &countingStore{DB: e.db}
	e.fake = providerfake.New("sk-test", "g-test")
	fakeSrv := httptest.NewServer(e.fake)
	t.Cleanup(fakeSrv.Close)
	e.fakeURL = fakeSrv.URL
	if o.limiter == nil {
		o.limiter = ratelimit.NewMemory()
	}
	e.auth = authFor(e.db)
	opts := widget.Options{
		Store: e.counting, Auth: e.auth, Limiter: o.limiter, CacheTTL: o.cacheTTL, PublicURL: o.publicURL,
		Provider: provider.New(provider.Config{OpenAIBaseURL: fakeSrv.URL, OpenAIAPIKey: "sk-test", GeminiBaseURL: fakeSrv.URL, GeminiAPIKey: "g-test"}, nil),
	}
	if !o.noTools {
		opts.Tools = e.tools
	}
	if o.noProviderKeys {
		opts.Provider = provider.New(provider.Config{OpenAIBaseURL: fakeSrv.URL, GeminiBaseURL: fakeSrv.URL}, nil)
	}
	w := widget.New(opts)
	e.srv = httptest.NewServer(serverHandler(w.Routes(), w.TestSessionRoutes(), auth.NewHandler(e.auth, auth.Features{}).Routes(), o.extra))
	t.Cleanup(e.srv.Close)
	return e
}

// authServices shares one auth.Service per database: making one costs a
// bcrypt hash, which is slow under the race detector.
var authServices sync.Map

func authFor(db *store.DB) *auth.Service {
	if s, ok := authServices.Load(db); ok {
		return s.(*auth.Service)
	}
	s, _ := authServices.LoadOrStore(db, auth.New(db, time.Hour))
	return s.(*auth.Service)
}

// serverHandler mounts routes behind the same middleware as the app, with
// logs discarded.
func serverHandler(routeSets ...[]httpx.Route) http.Handler {
	mux := http.NewServeMux()
	for _, rs := range routeSets {
		for _, r := range rs {
			mux.Handle(r.Method+" "+r.Pattern, r.Handler)
		}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	return httpx.NewEdge(logger, 1<<20, prometheus.NewRegistry()).Wrap(mux)
}

// newEnv starts an instance with two projects: project (owner and viewer,
// an OpenAI agent, a Gemini agent, two channels with keys) and other (its
// own agent).
func newEnv(t testing.TB, o envOptions) *env {
	e := newServer(t, o)
	e.seed(o)
	return e
}

func (e *env) seed(o envOptions) {
	t, ctx := e.t, context.Background()
	owner, ownerToken := e.newUser("owner@example.com")
	_, e.viewer = e.newUser("viewer@example.com")
	e.owner = ownerToken
	var err error
	e.project, _ = e.db.CreateProject(ctx, agentline.Project{Name: "Shop", Branding: agentline.Branding{DisplayName: "Shop Inc"}}, owner.ID)
	e.other, _ = e.db.CreateProject(ctx, agentline.Project{Name: "Other"}, owner.ID)
	if _, _, err := e.db.SetMember(ctx, e.project.ID, "viewer@example.com", agentline.RoleViewer); err != nil {
		t.Fatal(err)
	}
	newAgent := func(p int64, name, model string) agentline.Agent {
		a := agentline.Agent{ProjectID: p, Name: name, Model: model, Instructions: "Help with orders."}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		if a, err = e.db.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	e.agent = newAgent(e.project.ID, "Ada", "gpt-realtime")
	e.gemini = newAgent(e.project.ID, "Gem", "gemini-2.5-flash-native-audio-preview")
	e.otherAgent = newAgent(e.other.ID, "Otto", "gpt-realtime")
	var ch agentline.Channel
	e.do("POST", "/api/projects/"+itoa(e.project.ID)+"/channels", e.owner, "", map[string]any{"type": "voice_widget", "name": "site", "agent_id": e.agent.ID}, 201, &ch)
	e.channel = ch
	e.do("POST", "/api/projects/"+itoa(e.project.ID)+"/channels", e.owner, "", map[string]any{"type": "voice_widget", "name": "gem", "agent_id": e.gemini.ID}, 201, &ch)
	e.second = ch
	if !o.noKeys {
		e.key = e.newKey(e.channel.ID)
		e.secondKey = e.newKey(e.second.ID)
	}
}

// newUser makes a user and signs them in, in the store directly: bcrypt is
// slow under the race detector, and signing in is not what is tested here.
func (e *env) newUser(email string) (agentline.User, string) {
	e.t.Helper()
	ctx := context.Background()
	u, err := e.db.CreateUser(ctx, email, "not-a-hash")
	if err != nil {
		e.t.Fatal(err)
	}
	token, _ := auth.NewToken("als_")
	if err := e.db.CreateAuthSession(ctx, u.ID, auth.HashToken(token), time.Now().Add(time.Hour)); err != nil {
		e.t.Fatal(err)
	}
	return u, token
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func (e *env) newKey(channelID int64) string {
	var k struct {
		Key string `json:"key"`
	}
	e.do("POST", "/api/channels/"+itoa(channelID)+"/key", e.owner, "", nil, 201, &k)
	return k.Key
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// request sends one request: token is a bearer token, key an X-API-Key;
// body is marshalled unless it is a string.
func (e *env) request(method, path, token, key string, body any, header ...string) *http.Response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = strings.NewReader(string(raw))
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// do sends a request, checks the status and decodes the answer into out.
func (e *env) do(method, path, token, key string, body any, status int, out any, header ...string) http.Header {
	e.t.Helper()
	resp := e.request(method, path, token, key, body, header...)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, status, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.Header
}

// errorCode sends a request and returns the status and the error code.
func (e *env) errorCode(method, path, token, key string, body any, header ...string) (int, string) {
	e.t.Helper()
	resp := e.request(method, path, token, key, body, header...)
	defer resp.Body.Close()
	var eb httpx.ErrorBody
	json.NewDecoder(resp.Body).Decode(&eb)
	return resp.StatusCode, eb.Error.Code
}

func decodeBody(t testing.TB, resp *http.Response, out any) {
	t.Helper()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("decode: %v", err)
	}
}
