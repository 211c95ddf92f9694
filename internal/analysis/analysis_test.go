package analysis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/provider/analysisfake"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// dataSchema is the agents' data_schema in these tests.
const dataSchema = `{"type":"object","properties":{"order_id":{"type":"string"},"callback_wanted":{"type":"boolean"}}}`

// hooks keeps the deliveries a webhook endpoint received.
type hooks struct {
	mu   sync.Mutex
	got  []http.Header
	body [][]byte
}

func (h *hooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.got, h.body = append(h.got, r.Header.Clone()), append(h.body, b)
	h.mu.Unlock()
}

func (h *hooks) all() ([]http.Header, [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.got...), append([][]byte(nil), h.body...)
}

// fixture is a running agentline whose providers are the loopback fakes
// (the realtime token endpoints and the text APIs on one server), with a
// project, a widget channel and key, and a webhook endpoint that wants
// conversation.analyzed.
type fixture struct {
	s       *apptest.Server
	fake    *analysisfake.Fake
	hooks   *hooks
	tok     string
	project int64
	channel int64
	key     string
	secret  string
}

func newFixture(t *testing.T, d store.Dialect, env map[string]string) *fixture {
	t.Helper()
	f := &fixture{fake: analysisfake.New("sk-test", "g-test"), hooks: &hooks{}}
	mux := http.NewServeMux()
	mux.Handle("/v1/responses", f.fake)
	mux.Handle("/v1beta/", f.fake)
	mux.Handle("/", providerfake.New("sk-test", "g-test"))
	providers := httptest.NewServer(mux)
	t.Cleanup(providers.Close)
	receiver := httptest.NewServer(f.hooks)
	t.Cleanup(receiver.Close)
	vars := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": providers.URL, "GEMINI_API_KEY": "g-test",
		"GEMINI_BASE_URL": providers.URL, "AGENTLINE_SANDBOX": "false", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
		"AGENTLINE_ANALYSIS_MAX_ATTEMPTS": "3", "AGENTLINE_ANALYSIS_RETRY_BACKOFF": "20ms", "AGENTLINE_WEBHOOK_RETRY_SPAN": "1h"}
	for k, v := range env {
		vars[k] = v
	}
	f.s = apptest.StartFresh(t, d, vars)
	_, f.tok = f.s.NewUser(t, "owner@example.com")
	var p struct{ ID int64 }
	f.s.Must(t, 201, "POST", "/api/projects", f.tok, map[string]string{"name": "Shop"}, &p)
	f.project = p.ID
	var hook struct{ Secret string }
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", f.tok,
		map[string]any{"url": receiver.URL + "/hook", "events": []string{agentline.EventConversationAnalyzed}}, &hook)
	f.secret = hook.Secret
	return f
}

// agent makes an agent of the model with success criteria and the data
// schema, and makes it the widget channel's agent (making the channel and
// its key the first time).
func (f *fixture) agent(t *testing.T, model string) agentline.Agent {
	t.Helper()
	var a agentline.Agent
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project)+"/agents", f.tok, map[string]any{"name": "Ada", "model": model,
		"analysis": map[string]any{"summary": true, "success_criteria": "The caller got an order id.", "data_schema": json.RawMessage(dataSchema)}}, &a)
	if f.channel != 0 {
		f.s.Must(t, 200, "PATCH", "/api/channels/"+itoa(f.channel), f.tok, map[string]any{"agent_id": a.ID}, nil)
		return a
	}
	var c struct{ ID int64 }
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project)+"/channels", f.tok, map[string]any{"type": "voice_widget", "name": "site", "agent_id": a.ID}, &c)
	f.channel = c.ID
	var key struct{ Key string }
	f.s.Must(t, 201, "POST", "/api/channels/"+itoa(c.ID)+"/key", f.tok, map[string]any{"allowed_origins": []string{"https://shop.example.com"}}, &key)
	f.key = key.Key
	return a
}

// widgetConversation starts a widget session through the public API,
// reports the lines (user first), and ends it.
func (f *fixture) widgetConversation(t *testing.T, a agentline.Agent, userLines ...string) string {
	t.Helper()
	post := func(path string, body any) *apptest.Response {
		req := f.s.Request(t, "POST", path, "", body)
		req.Header.Set("X-API-Key", f.key)
		req.Header.Set("Origin", "https://shop.example.com")
		return f.s.Send(t, req)
	}
	var sess struct {
		SessionID string `json:"session_id"`
	}
	r := post("/widget/v1/session", map[string]any{"agent_id": a.ID})
	if r.Status != 201 {
		t.Fatalf("session: %s", r)
	}
	r.JSON(t, &sess)
	now := time.Now().UTC()
	var events []any
	for i, l := range userLines {
		at := now.Add(time.Duration(2*i) * time.Second)
		events = append(events, map[string]any{"type": "transcript", "at": at, "data": map[string]string{"role": "user", "text": l}},
			map[string]any{"type": "transcript", "at": at.Add(time.Second), "data": map[string]string{"role": "assistant", "text": "Sure."}})
	}
	events = append(events, map[string]any{"type": "session_ended", "at": now.Add(time.Minute)})
	if r := post("/widget/v1/analytics", map[string]any{"session_id": sess.SessionID, "events": events}); r.Status >= 300 {
		t.Fatalf("events: %s", r)
	}
	return sess.SessionID
}

// phoneConversation records an inbound call of the agent that completes
// with the caller's lines in its log, as the relay's end does.
func (f *fixture) phoneConversation(t *testing.T, a agentline.Agent, sid string, callerLines ...string) string {
	t.Helper()
	ctx := context.Background()
	db := f.s.App.Store
	call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.project, AgentID: a.ID, CallSID: sid, Direction: agentline.CallInbound,
		From: "+14155550199", To: "+14155550100", Status: agentline.CallInProgress}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var log []agentline.CallLogEntry
	for _, l := range callerLines {
		log = append(log, agentline.CallLogEntry{Type: "transcript", Role: "caller", Text: l, At: time.Now().UTC()},
			agentline.CallLogEntry{Type: "transcript", Role: "agent", Text: "Let me see.", At: time.Now().UTC()})
	}
	d := 42
	// The relay's end record, with the rest of the log.
	end := agentline.CallEvent{CallSID: sid, Status: agentline.CallCompleted, DurationS: &d, EndReason: "caller_hangup", Log: log}
	if _, err := db.ApplyCallEvent(ctx, end, conversation.RelayEnded(len(callerLines) > 0)); err != nil {
		t.Fatal(err)
	}
	return agentline.CallConversationID(call.ID)
}

// waitAnalysis polls the conversation until its analysis is no longer
// pending (at most 30 s) and returns it.
func (f *fixture) waitAnalysis(t *testing.T, id string) agentline.Conversation {
	t.Helper()
	var c agentline.Conversation
	for range 3000 {
		f.s.Must(t, 200, "GET", "/api/conversations/"+id, f.tok, nil, &c)
		if c.Analysis != nil && c.Analysis.Status != agentline.AnalysisPending {
			return c
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("conversation %s: analysis still %+v", id, c.Analysis)
	return c
}

// checkDone checks a done analysis: the fake's summary of the first user
// line, success, and data valid against the agent's schema.
func checkDone(t *testing.T, c agentline.Conversation, firstLine, model string) {
	t.Helper()
	a := c.Analysis
	if a.Status != agentline.AnalysisDone || a.Summary != "The user asked: "+firstLine || a.Success == nil || !*a.Success ||
		a.SuccessReason == "" || a.Model != model || a.FinishedAt == nil || a.Attempts != 1 {
		t.Fatalf("analysis of %s = %+v", c.ID, a)
	}
	schema, err := jsonschema.UnmarshalJSON(strings.NewReader(dataSchema))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("data.json", schema); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("data.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(a.Data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil || !strings.Contains(string(a.Data), `"order_id":"fake"`) {
		t.Fatalf("data %s: %v", a.Data, err)
	}
}

// waitABit is one poll's pause.
func waitABit() { time.Sleep(10 * time.Millisecond) }
