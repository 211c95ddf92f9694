package cluster_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// drainingInstance starts one instance on a SQLite file with the given
// drain timeout, its fixture, and a live call through it.
func drainingInstance(t *testing.T, ctx context.Context, drainTimeout string) (*instance, fixture, *liveCall, string, fakes) {
	t.Helper()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "agentline.db")
	f := startFakes(t)
	env := f.env(dbURL, "")
	env["AGENTLINE_DRAIN_TIMEOUT"] = drainTimeout
	i := start(t, "a", env)
	fx := setup(t, i, dbURL)
	lc := dial(t, ctx, i, f, fx)
	lc.exchange(t, ctx)
	return i, fx, lc, dbURL, f
}

// storedCall reads a call's record straight from the database.
func storedCall(t *testing.T, ctx context.Context, dbURL string, projectID int64, sid string) agentline.Call {
	t.Helper()
	c, err := openDB(t, ctx, dbURL).Call(ctx, projectID, sid)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// storedLead reads a lead straight from the database.
func storedLead(t *testing.T, ctx context.Context, dbURL string, projectID, id int64) agentline.Lead {
	t.Helper()
	l, err := openDB(t, ctx, dbURL).Lead(ctx, projectID, id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// On SIGTERM the instance turns unready at once and refuses new sessions
// and calls, while the live call goes on both ways; a call answered just
// before the signal still gets its stream, even after the other call ended.
// A form submit is a short write, not a call: it is stored while draining,
// and the live chat it gates is refused like any new session. When the
// callers have hung up, the process exits 0 and the records say the callers
// ended the calls.
func TestDrainKeepsLiveCallsUntilTheyEnd(t *testing.T) {
	t.Parallel() // each test starts its own instances, database and fakes
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	i, fx, lc, dbURL, f := drainingInstance(t, ctx, "30s")
	// Answered before the signal; its stream opens after it.
	answered, err := callsim.Webhook(ctx, i.Client, i.URL, "CAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "+14155550198", fx.number, signed(callsim.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := callsim.ParseTwiML(answered)
	if err != nil {
		t.Fatal(err)
	}
	chat := formChannel(t, i, fx, "live_chat")
	var chatKey struct{ Key string }
	i.Must(t, 201, "POST", "/api/channels/"+itoa(chat.ID)+"/key", fx.token, nil, &chatKey)

	i.signal(t, syscall.SIGTERM)
	waitFor(t, 5*time.Second, "/readyz unready", func() bool {
		r := i.Do(t, "GET", "/readyz", "", nil)
		return r.Status == http.StatusServiceUnavailable && r.ErrorCode() == "unavailable"
	})
	r := i.widget(t, "POST", "/widget/v1/session", fx.key, map[string]any{"agent_id": fx.webAgent.ID})
	if r.Status != http.StatusServiceUnavailable || r.ErrorCode() != "unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("new widget session while draining: %s (Retry-After %q)", r, r.Header.Get("Retry-After"))
	}
	doc, err := callsim.Webhook(ctx, i.Client, i.URL, "CA0123456789abcdef0123456789abcdef", "+14155550199", fx.number, signed(callsim.Options{}))
	if err != nil || !strings.Contains(doc, `<Reject reason="busy"`) {
		t.Fatalf("new inbound call while draining: %q, %v; want a busy <Reject>", doc, err)
	}
	r = i.Do(t, "POST", "/api/agents/"+itoa(fx.callAgent.ID)+"/telephony/outbound", fx.token, map[string]string{"to_number": "+14155550123"})
	if r.Status != http.StatusServiceUnavailable || r.ErrorCode() != "unavailable" {
		t.Fatalf("new outbound call while draining: %s", r)
	}
	i.Must(t, 200, "GET", "/api/projects/"+itoa(fx.project.ID), fx.token, nil, nil) // the rest still serves
	var lead struct {
		LeadID    int64  `json:"lead_id"`
		SessionID string `json:"session_id"`
	}
	i.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(chat.ID), "", map[string]string{"name": "Ada", "email": "ada@example.com"}, &lead)
	r = i.widget(t, "POST", "/widget/v1/session", chatKey.Key, map[string]any{"agent_id": fx.webAgent.ID, "session_id": lead.SessionID})
	if r.Status != http.StatusServiceUnavailable || r.ErrorCode() != "unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("starting the live chat of a lead while draining: %s (Retry-After %q)", r, r.Header.Get("Retry-After"))
	}

	lc.exchange(t, ctx)
	lc.exchange(t, ctx)
	if err := lc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the first call's end recorded", func() bool {
		var c agentline.Call
		i.Must(t, 200, "GET", "/api/calls/"+lc.CallSID, fx.token, nil, &c)
		return c.Status == agentline.CallCompleted
	})
	// No stream runs now, but one is awaited: the instance stays.
	time.Sleep(300 * time.Millisecond)
	if !i.running() {
		t.Fatal("the instance exited before the stream of a call it had answered came")
	}
	late, err := callsim.Open(ctx, stream, signed(callsim.Options{Server: i.URL, CallSID: "CAaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", EchoMarks: true}))
	if err != nil {
		t.Fatalf("stream of a call answered before the drain: %v", err)
	}
	defer late.Close()
	ss, err := f.model.Next(ctx)
	if err != nil {
		t.Fatalf("the answered call's stream reached no model: %v", err)
	}
	lateCall := &liveCall{Call: late, model: ss}
	lateCall.exchange(t, ctx)
	lateCall.exchange(t, ctx)
	if !i.running() {
		t.Fatal("the instance exited with a call still live")
	}
	if err := late.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := i.wait(t, 20*time.Second); err != nil {
		t.Fatalf("exit after the drain: %v, want status 0", err)
	}
	for _, lc := range []*liveCall{lc, lateCall} {
		c := storedCall(t, ctx, dbURL, fx.project.ID, lc.CallSID)
		if c.Status != agentline.CallCompleted || c.EndReason != "caller_hangup" {
			t.Fatalf("record of %s = %s %s, want completed caller_hangup", lc.CallSID, c.Status, c.EndReason)
		}
	}
	if l := storedLead(t, ctx, dbURL, fx.project.ID, lead.LeadID); l.SessionID == nil || *l.SessionID != lead.SessionID {
		t.Fatalf("lead submitted while draining = %+v, want it stored with session %s", l, lead.SessionID)
	}
	if log, _ := os.ReadFile(i.logPath); !strings.Contains(string(log), `"msg":"drained"`) {
		t.Fatal(`no "drained" log line`)
	}
}

// A call still live when the drain timeout passes is ended, recorded with
// reason shutdown, and the process exits 0.
func TestDrainTimeoutEndsLiveCalls(t *testing.T) {
	t.Parallel() // each test starts its own instances, database and fakes
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	i, fx, lc, dbURL, _ := drainingInstance(t, ctx, "1s")

	sent := time.Now()
	i.signal(t, syscall.SIGTERM)
	if err := i.wait(t, 20*time.Second); err != nil {
		t.Fatalf("exit after the drain timeout: %v, want status 0", err)
	}
	if d := time.Since(sent); d < time.Second {
		t.Fatalf("exited %v after SIGTERM, before the 1 s drain timeout", d)
	}
	select {
	case <-lc.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the caller's stream is still open after the exit")
	}
	if !lc.model.WaitDone(5 * time.Second) {
		t.Fatal("the model's socket is still open after the exit")
	}
	c := storedCall(t, ctx, dbURL, fx.project.ID, lc.CallSID)
	if c.Status != agentline.CallCompleted || c.EndReason != "shutdown" || c.DurationS == nil {
		t.Fatalf("record = %+v, want completed with reason shutdown", c)
	}
}
