package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// eventLog is a webhook endpoint on loopback that keeps each event's type
// and subject, one entry per distinct webhook-id.
type eventLog struct {
	mu   sync.Mutex
	seen map[string]string // webhook-id -> "type subject"
}

func (l *eventLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Call struct {
				CallSID string `json:"call_sid"`
			} `json:"call"`
			Conversation struct {
				ID string `json:"id"`
			} `json:"conversation"`
		} `json:"data"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &ev)
	l.mu.Lock()
	l.seen[r.Header.Get("webhook-id")] = ev.Type + " " + ev.Data.Call.CallSID + ev.Data.Conversation.ID
	l.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// count is how many distinct events of type typ about subject came.
func (l *eventLog) count(typ, subject string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.seen {
		if e == typ+" "+subject {
			n++
		}
	}
	return n
}

// Phone calls our records show live are reconciled with the carrier
// (twiliofake, asked through twilio-go's GET .../Calls/{CallSid}.json):
// at the next start, every live call is asked about and the final statuses
// are applied through the status-callback path, with their
// call.status_changed and conversation.ended events; a call the carrier
// says is still in progress (another instance may relay it) is left alone;
// one the carrier does not know is ended. Later, the recurring run ends a
// call that ends at the carrier while the instance runs but whose end
// nobody reported. On SQLite and PostgreSQL.
func TestCallsReconciledWithTheCarrier(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testReconcile(t, d)
		})
	}
}

func testReconcile(t *testing.T, d store.Dialect) {
	ctx := context.Background()
	fake := twiliofake.New(twiliofake.Options{})
	t.Cleanup(fake.Close)
	events := &eventLog{seen: map[string]string{}}
	hooks := httptest.NewServer(events)
	t.Cleanup(hooks.Close)
	dbURL := storetest.URL(t, d)
	env := func(after string) map[string]string {
		return map[string]string{"TWILIO_ACCOUNT_SID": fake.AccountSID(), "TWILIO_AUTH_TOKEN": fake.AuthToken(), "TWILIO_API_BASE_URL": fake.URL(),
			"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
			"AGENTLINE_CALL_RECONCILE_AFTER": after}
	}
	// The instance that dies: its calls are in progress in the records.
	first := apptest.Start(t, apptest.Config(t, dbURL, env("1h")))
	_, tok := first.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	first.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	first.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	first.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", tok, map[string]any{"url": hooks.URL,
		"events": []string{agentline.EventCallStatusChanged, agentline.EventConversationEnded}}, nil)
	const ours = "+14155550100"
	if _, err := first.App.Store.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: ours, AgentID: &a.ID,
		Status: agentline.NumberActive, CarrierSID: "PN1"}); err != nil {
		t.Fatal(err)
	}
	live := func(db *store.DB) string {
		t.Helper()
		sid := fake.IncomingCall("+14155550199", ours)
		for _, st := range []string{agentline.CallRinging, agentline.CallInProgress} {
			if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: st, Direction: agentline.CallInbound,
				From: "+14155550199", To: ours}, conversation.CallChanged); err != nil {
				t.Fatal(err)
			}
		}
		return sid
	}
	ended, goingOn := live(first.App.Store), live(first.App.Store)
	unknown := "CA" + strings.Repeat("0", 32)
	if _, err := first.App.Store.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: unknown, Status: agentline.CallInProgress,
		Direction: agentline.CallInbound, From: "+14155550198", To: ours}, conversation.CallChanged); err != nil {
		t.Fatal(err)
	}
	first.Stop(t)
	fake.SetCallStatus(ended, agentline.CallCompleted) // the carrier ended it when the stream dropped

	// The next start asks about every live call, however recent.
	next := apptest.Start(t, apptest.Config(t, dbURL, env("1h")))
	db := next.App.Store
	call := func(sid string) agentline.Call {
		t.Helper()
		c, err := db.Call(ctx, p.ID, sid)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		for i := 0; !cond(); i++ {
			if i > 600 {
				t.Fatalf("%s: not within 30 s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	until("the calls ended at the carrier reconciled at start", func() bool {
		return agentline.CallStatusFinal(call(ended).Status) && agentline.CallStatusFinal(call(unknown).Status)
	})
	if c := call(ended); c.Status != agentline.CallCompleted || c.EndReason != agentline.EndReasonReconciled || c.DurationS == nil || c.EndedAt == nil {
		t.Errorf("the call ended at the carrier: %+v", c)
	}
	if c := call(unknown); c.Status != agentline.CallCompleted || c.EndReason != "unknown to the carrier" {
		t.Errorf("the call the carrier does not know: %+v", c)
	}
	var conv agentline.Conversation
	next.Must(t, 200, "GET", "/api/conversations/"+agentline.CallConversationID(call(ended).ID), tok, nil, &conv)
	if conv.Status != agentline.ConversationEnded || conv.EndReason != agentline.EndReasonReconciled {
		t.Errorf("conversation of the reconciled call: %s %q", conv.Status, conv.EndReason)
	}
	until("the events of the reconciled calls", func() bool {
		return events.count(agentline.EventCallStatusChanged, ended) == 3 && events.count(agentline.EventConversationEnded, conv.ID) == 1 &&
			events.count(agentline.EventConversationEnded, agentline.CallConversationID(call(unknown).ID)) == 1
	})
	if c := call(goingOn); c.Status != agentline.CallInProgress || c.EndedAt != nil {
		t.Errorf("the call still in progress at the carrier was touched: %+v", c)
	}
	next.Stop(t)

	// The recurring run: the call goes on at the carrier while the instance
	// starts (and is asked about), then ends there with no report to us.
	asked := func() int {
		n := 0
		for _, r := range fake.Requests() {
			if strings.HasPrefix(r, "GET ") && strings.Contains(r, "/Calls/"+goingOn) {
				n++
			}
		}
		return n
	}
	before := asked()
	third := apptest.Start(t, apptest.Config(t, dbURL, env("1s")))
	until("the carrier asked about the live call", func() bool { return asked() > before })
	fake.SetCallStatus(goingOn, agentline.CallCompleted)
	db = third.App.Store
	until("the call that ended at the carrier reconciled by the recurring run", func() bool {
		return agentline.CallStatusFinal(call(goingOn).Status)
	})
	if c := call(goingOn); c.Status != agentline.CallCompleted || c.EndReason != agentline.EndReasonReconciled || c.DurationS == nil {
		t.Errorf("the call ended later: %+v", c)
	}
	until("its conversation.ended", func() bool {
		return events.count(agentline.EventConversationEnded, agentline.CallConversationID(call(goingOn).ID)) == 1
	})
}
