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
	"github.com/agentline/agentline/internal/telephony"
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

func TestAvailableNumbers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	path := fmt.Sprintf("/api/projects/%d/telephony/numbers/available", e.project)
	e.run([]check{
		{name: "viewer may search", token: e.viewer, method: "GET", path: path + "?area_code=212", status: 200, has: `"phone_number":"+12125550100"`},
		{name: "lower-case country", token: e.viewer, method: "GET", path: path + "?country=us", status: 200, has: `"region":"CA"`},
		{name: "other country", token: e.owner, method: "GET", path: path + "?country=GB", status: 400, code: "invalid_request", has: "only US local numbers are supported"},
		{name: "two-digit area code", token: e.owner, method: "GET", path: path + "?area_code=41", status: 400, code: "invalid_request", has: "three digits"},
		{name: "letters in area code", token: e.owner, method: "GET", path: path + "?area_code=4a5", status: 400, code: "invalid_request"},
		{name: "outsider", token: e.outsider, method: "GET", path: path, status: 404, code: "not_found"},
		{name: "no session", method: "GET", path: path, status: 401, code: "unauthorized"},
		{name: "bad project id", token: e.owner, method: "GET", path: "/api/projects/abc/telephony/numbers/available", status: 404},
	})
	var items []map[string]any
	res := e.do(e.viewer, "GET", path+"?area_code=415", nil)
	res.json(&items)
	if len(items) != 10 {
		t.Fatalf("items = %d", len(items))
	}
	for _, k := range []string{"phone_number", "friendly_name", "locality", "region", "postal_code", "capabilities"} {
		if _, ok := items[0][k]; !ok {
			t.Errorf("item has no %s: %v", k, items[0])
		}
	}
	e.fake.FailNext(500, 20500, "Internal Server Error at the carrier")
	e.run([]check{{name: "carrier failure", token: e.owner, method: "GET", path: path, status: 502, code: "carrier_error", has: "Internal Server Error at the carrier"}})
}

func TestProvisionNumber(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	path := fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project)
	body := func(phone string, agent int64) map[string]any {
		return map[string]any{"phone_number": phone, "agent_id": agent}
	}

	res := e.do(e.editor, "POST", path, body("+14155550100", e.ada))
	if res.status != 201 {
		t.Fatalf("provision: %d %s", res.status, res.body)
	}
	var n agentline.PhoneNumber
	res.json(&n)
	if n.ID == 0 || n.PhoneNumber != "+14155550100" || n.AgentID == nil || *n.AgentID != e.ada || n.Status != "active" || !strings.HasPrefix(n.CarrierSID, "PN") || n.CreatedAt.IsZero() {
		t.Fatalf("number = %+v", n)
	}
	bought := e.fake.Numbers()
	if len(bought) != 1 || bought[0].SID != n.CarrierSID || bought[0].VoiceURL != "https://"+botHost+"/api/telephony/inbound" ||
		bought[0].VoiceMethod != "POST" || bought[0].StatusCallback != "https://"+botHost+"/api/telephony/status" {
		t.Fatalf("bought = %+v", bought)
	}

	e.run([]check{
		{name: "viewer may not provision", token: e.viewer, method: "POST", path: path, body: body("+14155550101", e.bob), status: 403, code: "forbidden"},
		{name: "outsider", token: e.outsider, method: "POST", path: path, body: body("+14155550101", e.bob), status: 404, code: "not_found"},
		{name: "outsider into own project with our agent", token: e.outsider, method: "POST", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e.otherProject), body: body("+14155550101", e.bob), status: 400, has: "not in this project"},
		{name: "not E.164", token: e.owner, method: "POST", path: path, body: body("4155550101", e.bob), status: 400, code: "invalid_request", has: "E.164"},
		{name: "not US", token: e.owner, method: "POST", path: path, body: body("+442071838750", e.bob), status: 400, code: "invalid_request", has: "only US local numbers"},
		{name: "no agent", token: e.owner, method: "POST", path: path, body: map[string]any{"phone_number": "+14155550101"}, status: 400, has: "agent_id is required"},
		{name: "agent of another project", token: e.owner, method: "POST", path: path, body: body("+14155550101", e.eve), status: 400, has: "not in this project"},
		{name: "gemini agent", token: e.owner, method: "POST", path: path, body: body("+14155550101", e.gemini), status: 400, code: "unsupported_provider", has: "Gemini"},
		{name: "agent already has a number", token: e.owner, method: "POST", path: path, body: body("+14155550101", e.ada), status: 409, code: "conflict", has: "release it first"},
		{name: "number already provisioned", token: e.owner, method: "POST", path: path, body: body("+14155550100", e.bob), status: 409, code: "conflict", has: "already provisioned"},
		{name: "unknown field", token: e.owner, method: "POST", path: path, body: `{"phone_number":"+14155550101","agent_id":1,"color":"red"}`, status: 400, has: "color"},
		{name: "malformed JSON", token: e.owner, method: "POST", path: path, body: `{"phone_number":`, status: 400},
		{name: "wrong type", token: e.owner, method: "POST", path: path, body: `{"phone_number":4155550101,"agent_id":1}`, status: 400, has: "phone_number"},
	})
	if got := len(e.fake.Numbers()); got != 1 {
		t.Fatalf("refused requests bought numbers: %d owned", got)
	}

	// The carrier refuses: its reason is shown and nothing is stored.
	e.fake.FailNext(400, 21422, "PhoneNumber +14155550101 is not available")
	e.run([]check{{name: "carrier refuses", token: e.owner, method: "POST", path: path, body: body("+14155550101", e.bob), status: 502, code: "carrier_error", has: "is not available"}})
	var list []agentline.PhoneNumber
	e.do(e.viewer, "GET", path, nil).json(&list)
	if len(list) != 1 || len(e.fake.Numbers()) != 1 {
		t.Fatalf("after carrier failure: stored %d, bought %d", len(list), len(e.fake.Numbers()))
	}
}

// A purchase followed by a database failure leaves no number bought: while
// the carrier sells the number, another request stores the same number, so
// the insert fails and the handler releases what it bought.
func TestProvisionReleasesWhenStoringFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	hold := e.fake.HoldNext()
	done := make(chan response, 1)
	go func() {
		done <- e.do(e.owner, "POST", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), map[string]any{"phone_number": "+14155550100", "agent_id": e.ada})
	}()
	<-hold.Arrived()
	if _, err := e.app.Store.CreatePhoneNumber(context.Background(), agentline.PhoneNumber{
		ProjectID: e.otherProject, PhoneNumber: "+14155550100", Status: agentline.NumberUnassigned, CarrierSID: "PNelsewhere",
	}); err != nil {
		t.Fatal(err)
	}
	hold.Release()
	res := <-done
	if res.status != 409 || res.errorCode() != "conflict" {
		t.Fatalf("provision = %d %s", res.status, res.body)
	}
	if owned := e.fake.Numbers(); len(owned) != 0 {
		t.Fatalf("numbers still bought at the carrier: %+v", owned)
	}
	if released := e.fake.Released(); len(released) != 1 || released[0].PhoneNumber != "+14155550100" {
		t.Fatalf("released = %+v", released)
	}
}

func TestNumberLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	n := e.provision("+14155550100", e.ada)
	list := fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project)
	one := fmt.Sprintf("%s/%d", list, n.ID)
	foreign := fmt.Sprintf("/api/projects/%d/telephony/numbers/%d", e.otherProject, n.ID)

	e.run([]check{
		{name: "viewer lists", token: e.viewer, method: "GET", path: list, status: 200, has: `"status":"active"`},
		{name: "outsider lists", token: e.outsider, method: "GET", path: list, status: 404},
		{name: "outsider lists own project", token: e.outsider, method: "GET", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e.otherProject), status: 200, has: "[]"},

		{name: "viewer may not suspend", token: e.viewer, method: "PATCH", path: one, body: map[string]any{"status": "suspended"}, status: 403},
		{name: "outsider suspends", token: e.outsider, method: "PATCH", path: one, body: map[string]any{"status": "suspended"}, status: 404},
		{name: "outsider suspends through own project", token: e.outsider, method: "PATCH", path: foreign, body: map[string]any{"status": "suspended"}, status: 404},
		{name: "suspend", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "suspended"}, status: 200, has: `"status":"suspended"`},
		{name: "back to active", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "active"}, status: 200, has: `"status":"active"`},
		{name: "bad status", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "gone"}, status: 400, has: "status must be"},
		{name: "nothing to change", token: e.editor, method: "PATCH", path: one, body: map[string]any{}, status: 400},
		{name: "unassign and link at once", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "unassigned", "agent_id": e.bob}, status: 400},
		{name: "link a gemini agent", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.gemini}, status: 400, code: "unsupported_provider"},
		{name: "link another tenant's agent", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.eve}, status: 400, has: "not in this project"},
		{name: "unlink", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "unassigned"}, status: 200, has: `"agent_id":null,"status":"unassigned"`},
		{name: "activate without agent", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "active"}, status: 400, has: "no agent"},
		{name: "relink to bob, suspended", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.bob, "status": "suspended"}, status: 200, has: fmt.Sprintf(`"agent_id":%d,"status":"suspended"`, e.bob)},
		{name: "relink to ada", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.ada}, status: 200, has: fmt.Sprintf(`"agent_id":%d,"status":"active"`, e.ada)},
		{name: "missing number", token: e.editor, method: "PATCH", path: list + "/999999", body: map[string]any{"status": "suspended"}, status: 404},
	})
	second := e.provision("+14155550101", e.bob)
	e.run([]check{
		{name: "agent keeps one number", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.bob}, status: 409, has: "+14155550101"},
		{name: "editor may not release", token: e.editor, method: "DELETE", path: one, status: 403},
		{name: "outsider releases", token: e.outsider, method: "DELETE", path: foreign, status: 404},
	})

	// The carrier fails: the record stays.
	e.fake.FailNext(500, 20500, "carrier is down")
	e.run([]check{{name: "carrier failure on release", token: e.owner, method: "DELETE", path: one, status: 502, code: "carrier_error", has: "carrier is down"}})
	e.run([]check{
		{name: "release", token: e.owner, method: "DELETE", path: one, status: 204},
		{name: "released number is gone", token: e.owner, method: "DELETE", path: one, status: 404},
	})
	if r := e.fake.Released(); len(r) != 1 || r[0].SID != n.CarrierSID {
		t.Fatalf("released at carrier = %+v", r)
	}
	// A number the carrier no longer has still loses its record.
	e.fake.FailNext(404, 20404, "The requested resource was not found")
	e.run([]check{{name: "release a number gone at the carrier", token: e.owner, method: "DELETE", path: fmt.Sprintf("%s/%d", list, second.ID), status: 204}})
	var left []agentline.PhoneNumber
	e.do(e.owner, "GET", list, nil).json(&left)
	if len(left) != 0 {
		t.Fatalf("numbers left = %+v", left)
	}
}

func TestDeletingAnAgentUnassignsItsNumber(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	n := e.provision("+14155550100", e.bob)
	e.run([]check{{name: "delete agent", token: e.owner, method: "DELETE", path: fmt.Sprintf("/api/agents/%d", e.bob), status: 204}})
	var list []agentline.PhoneNumber
	e.do(e.owner, "GET", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), nil).json(&list)
	if len(list) != 1 || list[0].ID != n.ID || list[0].AgentID != nil || list[0].Status != agentline.NumberUnassigned {
		t.Fatalf("numbers = %+v", list)
	}
	if len(e.fake.Numbers()) != 1 {
		t.Fatal("the number must stay owned until it is released")
	}
}

func TestOutboundCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"AGENTLINE_MAX_CONCURRENT_CALLS": "2"})
	n := e.provision("+14155550100", e.ada)
	out := func(agent int64) string { return fmt.Sprintf("/api/agents/%d/telephony/outbound", agent) }
	to := map[string]any{"to_number": "+14155550123"}

	res := e.do(e.editor, "POST", out(e.ada), to)
	if res.status != 201 {
		t.Fatalf("outbound: %d %s", res.status, res.body)
	}
	var got map[string]any
	res.json(&got)
	sid, _ := got["call_sid"].(string)
	if !strings.HasPrefix(sid, "CA") || got["status"] != "queued" || len(got) != 2 {
		t.Fatalf("answer = %v", got)
	}
	calls := e.fake.Calls()
	if len(calls) != 1 || calls[0].SID != sid || calls[0].From != n.PhoneNumber || calls[0].To != "+14155550123" || calls[0].URL != "" ||
		calls[0].StatusCallback != "https://"+botHost+"/api/telephony/status" || strings.Join(calls[0].StatusCallbackEvents, " ") != "initiated ringing answered completed" {
		t.Fatalf("carrier call = %+v", calls)
	}
	streamURL, params := parseStreamTwiML(t, calls[0].Twiml)
	if streamURL != fmt.Sprintf("wss://%s/api/telephony/stream/%d", botHost, e.ada) || params["direction"] != "outbound" {
		t.Fatalf("stream %q params %v", streamURL, params)
	}
	record, err := e.app.Store.Call(context.Background(), e.project, sid)
	if err != nil || record.Direction != "outbound" || record.Status != "queued" || record.AgentID != e.ada || record.From != n.PhoneNumber ||
		record.NumberID == nil || *record.NumberID != n.ID || record.StreamRef == "" || record.StreamRef != params["stream_ref"] {
		t.Fatalf("record = %+v %v", record, err)
	}
	claims, err := verifyToken(e, params["stream_token"], e.ada)
	if err != nil || claims.Ref != record.StreamRef || claims.Direction != "outbound" {
		t.Fatalf("stream token: %+v %v", claims, err)
	}

	e.run([]check{
		{name: "viewer may not call", token: e.viewer, method: "POST", path: out(e.ada), body: to, status: 403},
		{name: "outsider", token: e.outsider, method: "POST", path: out(e.ada), body: to, status: 404},
		{name: "outsider's own agent without number", token: e.outsider, method: "POST", path: out(e.eve), body: to, status: 400, has: "no phone number"},
		{name: "missing agent", token: e.owner, method: "POST", path: out(999999), body: to, status: 404},
		{name: "bad number", token: e.owner, method: "POST", path: out(e.ada), body: map[string]any{"to_number": "555-0123"}, status: 400, has: "E.164"},
		{name: "no number", token: e.owner, method: "POST", path: out(e.ada), body: map[string]any{}, status: 400, has: "to_number"},
		{name: "own number", token: e.owner, method: "POST", path: out(e.ada), body: map[string]any{"to_number": n.PhoneNumber}, status: 400},
		{name: "agent without number", token: e.owner, method: "POST", path: out(e.bob), body: to, status: 400, has: "no phone number"},
		{name: "gemini agent", token: e.owner, method: "POST", path: out(e.gemini), body: to, status: 400, code: "unsupported_provider"},
	})
	// A suspended number does not call out.
	e.run([]check{
		{name: "suspend", token: e.owner, method: "PATCH", path: fmt.Sprintf("/api/projects/%d/telephony/numbers/%d", e.project, n.ID), body: map[string]any{"status": "suspended"}, status: 200},
		{name: "suspended number", token: e.owner, method: "POST", path: out(e.ada), body: to, status: 400, has: "suspended"},
		{name: "activate", token: e.owner, method: "PATCH", path: fmt.Sprintf("/api/projects/%d/telephony/numbers/%d", e.project, n.ID), body: map[string]any{"status": "active"}, status: 200},
	})
	// The carrier refuses: no call record is left.
	e.fake.FailNext(400, 21215, "Geo Permission configuration is not permitting call")
	e.run([]check{{name: "carrier refuses", token: e.owner, method: "POST", path: out(e.ada), body: to, status: 502, code: "carrier_error", has: "Geo Permission"}})
	var page struct{ Items []agentline.Call }
	e.do(e.owner, "GET", fmt.Sprintf("/api/projects/%d/telephony/calls", e.project), nil).json(&page)
	if len(page.Items) != 1 {
		t.Fatalf("calls after a refused call = %+v", page.Items)
	}
	// The cap of 2 live calls per project.
	e.run([]check{{name: "second call", token: e.owner, method: "POST", path: out(e.ada), body: to, status: 201}})
	res = e.do(e.owner, "POST", out(e.ada), to)
	if res.status != 429 || res.errorCode() != "rate_limited" || res.header.Get("Retry-After") == "" || !strings.Contains(string(res.body), "AGENTLINE_MAX_CONCURRENT_CALLS") {
		t.Fatalf("over the cap: %d %v %s", res.status, res.header, res.body)
	}
	// When a call ends, there is room again.
	if r := e.postForm("/api/telephony/status", url.Values{"CallSid": {sid}, "CallStatus": {"completed"}, "Direction": {"outbound-api"}, "CallDuration": {"3"}}, ""); r.status != 204 {
		t.Fatalf("status callback: %d %s", r.status, r.body)
	}
	e.run([]check{{name: "room again", token: e.owner, method: "POST", path: out(e.ada), body: to, status: 201}})
}

func TestEndCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	n := e.provision("+14155550100", e.ada)
	e.provision("+14155550101", e.bob)
	var started struct {
		CallSID string `json:"call_sid"`
	}
	e.do(e.owner, "POST", fmt.Sprintf("/api/agents/%d/telephony/outbound", e.ada), map[string]any{"to_number": "+14155550123"}).json(&started)
	end := func(agent int64, sid string) string {
		return fmt.Sprintf("/api/agents/%d/telephony/calls/%s", agent, sid)
	}

	e.run([]check{
		{name: "editor may not end", token: e.editor, method: "DELETE", path: end(e.ada, started.CallSID), status: 403},
		{name: "outsider", token: e.outsider, method: "DELETE", path: end(e.ada, started.CallSID), status: 404},
		{name: "outsider through own agent", token: e.outsider, method: "DELETE", path: end(e.eve, started.CallSID), status: 404},
		{name: "another agent's call", token: e.owner, method: "DELETE", path: end(e.bob, started.CallSID), status: 404},
		{name: "unknown call", token: e.owner, method: "DELETE", path: end(e.ada, "CA00000000000000000000000000000000"), status: 404},
		{name: "malformed call sid", token: e.owner, method: "DELETE", path: end(e.ada, "pending:x"), status: 404},
		{name: "end", token: e.owner, method: "DELETE", path: end(e.ada, started.CallSID), status: 204},
		{name: "already ended", token: e.owner, method: "DELETE", path: end(e.ada, started.CallSID), status: 409, has: "already ended"},
	})
	fc := e.fake.Calls()[0]
	if len(fc.Updates) != 1 || fc.Updates[0].Get("Status") != "completed" {
		t.Fatalf("carrier updates = %+v", fc.Updates)
	}
	rec, _ := e.app.Store.Call(context.Background(), e.project, started.CallSID)
	if rec.Status != "completed" || rec.EndedAt == nil || rec.EndReason == "" {
		t.Fatalf("record = %+v", rec)
	}

	// An inbound call, known from its status callback, ends the same way.
	in := e.fake.IncomingCall("+14155550199", n.PhoneNumber)
	if r := e.postForm("/api/telephony/status", url.Values{"CallSid": {in}, "CallStatus": {"in-progress"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}, ""); r.status != 204 {
		t.Fatalf("status callback: %d %s", r.status, r.body)
	}
	e.run([]check{{name: "end inbound", token: e.owner, method: "DELETE", path: end(e.ada, in), status: 204}})
	if rec, _ := e.app.Store.Call(context.Background(), e.project, in); rec.Status != "completed" || rec.Direction != "inbound" {
		t.Fatalf("inbound record = %+v", rec)
	}
	// The carrier refuses to hang up.
	in2 := e.fake.IncomingCall("+14155550199", n.PhoneNumber)
	e.postForm("/api/telephony/status", url.Values{"CallSid": {in2}, "CallStatus": {"ringing"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}, "")
	e.fake.FailNext(500, 20500, "cannot hang up now")
	e.run([]check{{name: "carrier failure", token: e.owner, method: "DELETE", path: end(e.ada, in2), status: 502, code: "carrier_error", has: "cannot hang up now"}})
}

func TestCallRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	n := e.provision("+14155550100", e.ada)
	e.provision("+14155550101", e.bob)
	status := func(sid, st, dir, to string, extra ...string) {
		t.Helper()
		f := url.Values{"CallSid": {sid}, "CallStatus": {st}, "Direction": {dir}, "From": {"+14155550199"}, "To": {to}, "AccountSid": {e.fake.AccountSID()}}
		for i := 0; i+1 < len(extra); i += 2 {
			f.Set(extra[i], extra[i+1])
		}
		if r := e.postForm("/api/telephony/status", f, ""); r.status != 204 {
			t.Fatalf("status %s %s: %d %s", sid, st, r.status, r.body)
		}
	}
	a := "CA" + strings.Repeat("a", 32)
	status(a, "ringing", "inbound", n.PhoneNumber, "SequenceNumber", "0", "Timestamp", "Mon, 23 Nov 2026 10:00:00 +0000")
	status(a, "completed", "inbound", n.PhoneNumber, "SequenceNumber", "2", "Timestamp", "Mon, 23 Nov 2026 10:01:05 +0000", "CallDuration", "60")
	status(a, "in-progress", "inbound", n.PhoneNumber, "SequenceNumber", "1", "Timestamp", "Mon, 23 Nov 2026 10:00:05 +0000") // late
	b := "CA" + strings.Repeat("b", 32)
	status(b, "in-progress", "inbound", "+14155550101")
	status("CA"+strings.Repeat("c", 32), "ringing", "inbound", "+19995550000") // not our number: acknowledged, not stored

	var call agentline.Call
	res := e.do(e.viewer, "GET", "/api/calls/"+a, nil)
	res.json(&call)
	if res.status != 200 || call.Status != "completed" || call.Direction != "inbound" || call.From != "+14155550199" || call.To != n.PhoneNumber ||
		call.AgentID != e.ada || call.DurationS == nil || *call.DurationS != 60 || call.EndedAt == nil || !call.EndedAt.Equal(time.Date(2026, 11, 23, 10, 1, 5, 0, time.UTC)) {
		t.Fatalf("call = %d %+v", res.status, call)
	}
	if strings.Contains(string(res.body), "stream_ref") {
		t.Fatalf("stream_ref leaked: %s", res.body)
	}
	calls := fmt.Sprintf("/api/projects/%d/telephony/calls", e.project)
	e.run([]check{
		{name: "outsider reads a call", token: e.outsider, method: "GET", path: "/api/calls/" + a, status: 404},
		{name: "unknown call", token: e.owner, method: "GET", path: "/api/calls/CA404", status: 404},
		{name: "no session", method: "GET", path: "/api/calls/" + a, status: 401},
		{name: "outsider lists", token: e.outsider, method: "GET", path: calls, status: 404},
		{name: "outsider lists own project", token: e.outsider, method: "GET", path: fmt.Sprintf("/api/projects/%d/telephony/calls", e.otherProject), status: 200, has: `"items":[]`},
		{name: "bad status filter", token: e.owner, method: "GET", path: calls + "?status=done", status: 400, has: "status"},
		{name: "bad agent filter", token: e.owner, method: "GET", path: calls + "?agent_id=x", status: 400, has: "agent_id"},
		{name: "limit too large", token: e.owner, method: "GET", path: calls + "?limit=201", status: 400, has: "limit"},
		{name: "limit zero", token: e.owner, method: "GET", path: calls + "?limit=0", status: 400},
		{name: "bad cursor", token: e.owner, method: "GET", path: calls + "?before=-1", status: 400, has: "before"},
		{name: "status callback without CallSid", method: "POST", path: "/api/telephony/status", body: "", status: 400},
	})
	if r := e.postForm("/api/telephony/status", url.Values{"CallSid": {a}, "CallStatus": {"exploded"}}, ""); r.status != 400 {
		t.Fatalf("bad CallStatus: %d", r.status)
	}
	if r := e.postForm("/api/telephony/status", url.Values{"CallSid": {a}, "CallStatus": {"completed"}, "CallDuration": {"x"}}, ""); r.status != 400 {
		t.Fatalf("bad CallDuration: %d", r.status)
	}

	var page struct {
		Items      []agentline.Call `json:"items"`
		NextBefore *int64           `json:"next_before"`
	}
	e.do(e.viewer, "GET", calls+"?limit=1", nil).json(&page)
	if len(page.Items) != 1 || page.Items[0].CallSID != b || page.NextBefore == nil {
		t.Fatalf("first page = %+v", page)
	}
	e.do(e.viewer, "GET", fmt.Sprintf("%s?limit=1&before=%d", calls, *page.NextBefore), nil).json(&page)
	if len(page.Items) != 1 || page.Items[0].CallSID != a || page.NextBefore == nil {
		t.Fatalf("second page = %+v", page)
	}
	e.do(e.viewer, "GET", fmt.Sprintf("%s?limit=1&before=%d", calls, *page.NextBefore), nil).json(&page)
	if len(page.Items) != 0 || page.NextBefore != nil {
		t.Fatalf("last page = %+v", page)
	}
	e.do(e.viewer, "GET", fmt.Sprintf("%s?agent_id=%d&status=in-progress", calls, e.bob), nil).json(&page)
	if len(page.Items) != 1 || page.Items[0].CallSID != b {
		t.Fatalf("filtered = %+v", page)
	}
	e.do(e.viewer, "GET", calls, nil).json(&page)
	if len(page.Items) != 2 || page.NextBefore != nil {
		t.Fatalf("all = %+v", page)
	}
}

func TestTelephonyDisabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"TELEPHONY_ENABLED": "false"})
	routes := []struct{ method, path string }{
		{"GET", fmt.Sprintf("/api/projects/%d/telephony/numbers/available", e.project)},
		{"GET", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project)},
		{"POST", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project)},
		{"PATCH", fmt.Sprintf("/api/projects/%d/telephony/numbers/1", e.project)},
		{"DELETE", fmt.Sprintf("/api/projects/%d/telephony/numbers/1", e.project)},
		{"POST", fmt.Sprintf("/api/agents/%d/telephony/outbound", e.ada)},
		{"DELETE", fmt.Sprintf("/api/agents/%d/telephony/calls/CA1", e.ada)},
		{"GET", fmt.Sprintf("/api/projects/%d/telephony/calls", e.project)},
		{"GET", "/api/calls/CA1"},
		{"POST", "/api/telephony/status"},
	}
	for _, r := range routes {
		res := e.do(e.owner, r.method, r.path, `{}`)
		if res.status != 404 || res.errorCode() != "not_found" || !strings.Contains(string(res.body), "telephony is disabled") {
			t.Errorf("%s %s = %d %s", r.method, r.path, res.status, res.body)
		}
	}
	if len(e.fake.Requests()) != 0 {
		t.Fatalf("the carrier was called: %v", e.fake.Requests())
	}
}

func TestNotConfigured(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"TWILIO_ACCOUNT_SID": "", "TWILIO_AUTH_TOKEN": ""})
	e.run([]check{
		{name: "no carrier account", token: e.owner, method: "GET", path: fmt.Sprintf("/api/projects/%d/telephony/numbers/available", e.project), status: 503, code: "not_configured", has: "TWILIO_ACCOUNT_SID"},
		{name: "no carrier account, buying", token: e.owner, method: "POST", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), body: map[string]any{"phone_number": "+14155550100", "agent_id": e.ada}, status: 503, code: "not_configured"},
		{name: "reads still work", token: e.owner, method: "GET", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), status: 200},
	})
	e2 := newEnv(t, map[string]string{"BOT_HOST": ""})
	e2.run([]check{
		{name: "no BOT_HOST", token: e2.owner, method: "POST", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e2.project), body: map[string]any{"phone_number": "+14155550100", "agent_id": e2.ada}, status: 503, code: "not_configured", has: "BOT_HOST"},
	})
	if len(e2.fake.Numbers()) != 0 {
		t.Fatal("bought a number without BOT_HOST")
	}
}

func TestStatusCallbackSignatureInProduction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"AGENTLINE_ENV": "production"})
	n := e.provision("+14155550100", e.ada)
	sid := "CA" + strings.Repeat("d", 32)
	form := url.Values{"CallSid": {sid}, "CallStatus": {"ringing"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}
	send := func(path, sig string, f url.Values) int {
		req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if sig != "" {
			req.Header.Set("X-Twilio-Signature", sig)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	public := "https://" + botHost + "/api/telephony/status"
	tampered := url.Values{}
	for k, v := range form {
		tampered[k] = v
	}
	tampered.Set("CallStatus", "completed")
	cases := []struct {
		name string
		path string
		sig  string
		form url.Values
		want int
	}{
		{"no signature", "/api/telephony/status", "", form, 403},
		{"wrong token", "/api/telephony/status", twiliofake.Sign("not-the-token", public, form), form, 403},
		{"wrong URL: the internal address", "/api/telephony/status", twiliofake.Sign(e.fake.AuthToken(), e.srv.URL+"/api/telephony/status", form), form, 403},
		{"wrong URL: another query", "/api/telephony/status?x=1", twiliofake.Sign(e.fake.AuthToken(), public, form), form, 403},
		{"tampered parameter", "/api/telephony/status", twiliofake.Sign(e.fake.AuthToken(), public, form), tampered, 403},
		{"valid", "/api/telephony/status", twiliofake.Sign(e.fake.AuthToken(), public, form), form, 204},
		{"valid with query", "/api/telephony/status?x=1", twiliofake.Sign(e.fake.AuthToken(), public+"?x=1", tampered), tampered, 204},
	}
	for _, c := range cases {
		if got := send(c.path, c.sig, c.form); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if rec, err := e.app.Store.Call(context.Background(), e.project, sid); err != nil || rec.Status != "completed" {
		t.Fatalf("record = %+v %v", rec, err)
	}
}

func verifyToken(e *env, token string, agentID int64) (telephony.Claims, error) {
	return telephony.Verify(e.app.Secret, token, agentID, time.Now())
}

// Every route of the phone channel is described in docs/openapi.yaml.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	e := newEnvNoUsers(t)
	doc := string(agentline.OpenAPI)
	for _, r := range e.Routes() {
		if !strings.Contains(r, "telephony") && !strings.HasPrefix(r, "GET /api/calls/") {
			continue
		}
		method, pattern, _ := strings.Cut(r, " ")
		i := strings.Index(doc, "\n  "+pattern+":\n")
		if i < 0 {
			t.Errorf("%s is not in docs/openapi.yaml", pattern)
			continue
		}
		rest := doc[i+len(pattern)+4:]
		if end := strings.Index(rest, "\n  /"); end >= 0 {
			rest = rest[:end]
		}
		if !strings.Contains(rest, "\n    "+strings.ToLower(method)+":") {
			t.Errorf("%s %s is not in docs/openapi.yaml", method, pattern)
		}
	}
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

// BenchmarkStatusCallback measures one carrier status callback through the
// whole HTTP stack (middleware, form parsing, the store's transaction) on
// SQLite, each creating the record of a new inbound call.
func BenchmarkStatusCallback(b *testing.B) {
	e := newEnv(b, nil)
	n := e.provision("+14155550100", e.ada)
	h := e.app.Handler()
	i := 0
	for b.Loop() {
		i++
		form := url.Values{"CallSid": {fmt.Sprintf("CA%032x", i)}, "CallStatus": {"ringing"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}
		req := httptest.NewRequest("POST", "/api/telephony/status", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 204 {
			b.Fatalf("status %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkOutboundTwiML measures building an outbound call's stream token
// and TwiML, the work done per outbound call besides the carrier request.
func BenchmarkOutboundTwiML(b *testing.B) {
	now := time.Now()
	for b.Loop() {
		tok := telephony.Sign("s3cret", 42, "sr_0123456789abcdefghijkl", "outbound", now.Add(telephony.StreamTokenTTL))
		if _, err := telephony.StreamTwiML(botHost, 42, telephony.StreamParam{Name: "direction", Value: "outbound"},
			telephony.StreamParam{Name: "stream_token", Value: tok}, telephony.StreamParam{Name: "stream_ref", Value: "sr_0123456789abcdefghijkl"}); err != nil {
			b.Fatal(err)
		}
	}
}
