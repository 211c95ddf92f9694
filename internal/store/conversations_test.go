package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// convFixture is a project with one conversation of each kind (a widget
// session that ended, a live chat, a completed phone call) and another
// project with a widget session.
type convFixture struct {
	widgetFixture
	widget, liveChat, call, other string
	lead                          agentline.Lead
	t0                            time.Time
}

func newConvFixture(t *testing.T, db *store.DB) convFixture {
	t.Helper()
	ctx := context.Background()
	f := convFixture{widgetFixture: newWidgetFixture(t, db), t0: time.Now().UTC().Add(-time.Hour).Truncate(time.Second)}
	mustSession := func(p agentline.Project, c agentline.Channel, a agentline.Agent, id string, at time.Time) {
		t.Helper()
		if _, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: id, ProjectID: p.ID, ChannelID: c.ID, AgentID: a.ID,
			Provider: agentline.ProviderOpenAI, Model: "gpt-realtime", StartedAt: at}, started); err != nil {
			t.Fatal(err)
		}
	}
	f.widget, f.other = "ses_widget", "ses_other"
	mustSession(f.p1, f.c1, f.a1, f.widget, f.t0)
	mustSession(f.p2, f.c2, f.a2, f.other, f.t0)
	tool, _ := json.Marshal(map[string]any{"call_id": "c1", "name": "stock", "arguments": map[string]any{"sku": "b1"},
		"output": "3 in stock", "is_error": false, "duration_ms": 12})
	failed, _ := json.Marshal(map[string]any{"call_id": "c2", "name": "stock", "output": "down", "is_error": true})
	if err := db.AddSessionEvents(ctx, f.p1.ID, f.widget, []agentline.SessionEvent{
		{Type: agentline.EventTranscript, At: f.t0.Add(time.Second), Data: json.RawMessage(`{"role":"user","text":"Do you sell Bicycles?"}`)},
		{Type: agentline.EventToolCall, At: f.t0.Add(2 * time.Second), Data: tool},
		{Type: agentline.EventToolCall, At: f.t0.Add(3 * time.Second), Data: failed},
		{Type: agentline.EventTranscript, At: f.t0.Add(4 * time.Second), Data: json.RawMessage(`{"role":"assistant","text":"We do."}`)},
		{Type: agentline.EventSessionEnded, At: f.t0.Add(90 * time.Second)},
	}, ended); err != nil {
		t.Fatal(err)
	}
	f.liveChat = "ses_livechat"
	var err error
	f.lead, err = db.CreateLead(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLiveChat,
		Answers: map[string]any{"name": "Grace"}}, &agentline.WidgetSession{ID: f.liveChat, ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID})
	if err != nil {
		t.Fatal(err)
	}
	call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: "CA1", Direction: agentline.CallOutbound,
		From: "+14155550100", To: "+14155550199", Status: agentline.CallQueued}, 10)
	if err != nil {
		t.Fatal(err)
	}
	f.call = agentline.CallConversationID(call.ID)
	d := 42
	if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallInProgress, At: f.t0.Add(time.Minute)}, callChanged); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted, At: f.t0.Add(2 * time.Minute),
		DurationS: &d, EndReason: "caller_hangup", Log: []agentline.CallLogEntry{
			{Type: "transcript", Role: "caller", Text: "I need a plumber", At: f.t0.Add(61 * time.Second)},
			{Type: "tool_call", Text: "book", Data: json.RawMessage(`{"name":"book","call_id":"t1","arguments":{},"output":"booked"}`), At: f.t0.Add(62 * time.Second)},
		}}, callChanged); err != nil {
		t.Fatal(err)
	}
	return f
}

func ids(list []agentline.Conversation) []string {
	out := []string{}
	for _, c := range list {
		out = append(out, c.ID)
	}
	return out
}

func TestConversationFilters(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newConvFixture(t, db)
		tests := []struct {
			name string
			f    agentline.ConversationFilter
			want []string
		}{
			{"all, newest first", agentline.ConversationFilter{}, []string{f.liveChat, f.call, f.widget}},
			{"kind widget", agentline.ConversationFilter{Kind: agentline.ConversationWidget}, []string{f.widget}},
			{"kind live_chat", agentline.ConversationFilter{Kind: agentline.ConversationLiveChat}, []string{f.liveChat}},
			{"kind phone", agentline.ConversationFilter{Kind: agentline.ConversationPhone}, []string{f.call}},
			{"agent", agentline.ConversationFilter{AgentID: f.a1.ID}, []string{f.liveChat, f.call, f.widget}},
			{"another project's agent", agentline.ConversationFilter{AgentID: f.a2.ID}, []string{}},
			{"channel", agentline.ConversationFilter{ChannelID: f.c1.ID}, []string{f.liveChat, f.widget}},
			{"status ended", agentline.ConversationFilter{Status: agentline.ConversationEnded}, []string{f.call, f.widget}},
			{"status live", agentline.ConversationFilter{Status: agentline.ConversationLive}, []string{f.liveChat}},
			{"from", agentline.ConversationFilter{From: f.t0.Add(30 * time.Second)}, []string{f.liveChat, f.call}},
			{"to", agentline.ConversationFilter{To: f.t0.Add(30 * time.Second)}, []string{f.widget}},
			{"text, any case", agentline.ConversationFilter{Query: "bicycles"}, []string{f.widget}},
			{"text of a call", agentline.ConversationFilter{Query: "PLUMBER"}, []string{f.call}},
			{"wildcards are literal", agentline.ConversationFilter{Query: "%"}, []string{}},
			{"one id", agentline.ConversationFilter{ID: f.call}, []string{f.call}},
			{"another project's id", agentline.ConversationFilter{ID: f.other}, []string{}},
		}
		for _, tt := range tests {
			got, err := db.Conversations(ctx, f.p1.ID, tt.f)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if g := ids(got); len(g) != len(tt.want) || (len(g) > 0 && !equal(g, tt.want)) {
				t.Errorf("%s: got %v, want %v", tt.name, g, tt.want)
			}
		}
	})
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestConversationPagingAndShape(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newConvFixture(t, db)
		var seen []string
		filter := agentline.ConversationFilter{Limit: 1}
		for range 5 {
			page, err := db.Conversations(ctx, f.p1.ID, filter)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			seen = append(seen, page[0].ID)
			filter.After = &agentline.ConversationCursor{StartedAt: page[0].StartedAt, ID: page[0].ID}
		}
		if !equal(seen, []string{f.liveChat, f.call, f.widget}) {
			t.Fatalf("pages = %v", seen)
		}
		w, err := db.Conversation(ctx, f.p1.ID, f.widget)
		if err != nil {
			t.Fatal(err)
		}
		if w.Kind != "widget" || w.Status != "ended" || w.EndReason != "ended" || w.DurationMS != 90000 || w.EndedAt == nil ||
			len(w.Transcript) != 2 || w.Transcript[0].Speaker != "user" || w.Transcript[1].Speaker != "agent" ||
			len(w.ToolCalls) != 2 || w.ToolCalls[0].Result != "3 in stock" || w.ToolCalls[0].DurationMS == nil ||
			*w.ToolCalls[0].DurationMS != 12 || !w.ToolCalls[1].IsError || w.Lead != nil || *w.ChannelID != f.c1.ID {
			t.Fatalf("widget conversation = %+v", w)
		}
		c, err := db.Conversation(ctx, f.p1.ID, f.call)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != "phone" || c.Direction != "outbound" || c.Status != "ended" || c.DurationMS != 42000 || c.EndReason != "caller_hangup" ||
			len(c.Transcript) != 1 || c.Transcript[0].Speaker != "user" || len(c.ToolCalls) != 1 || c.ToolCalls[0].Result != "booked" ||
			!c.StartedAt.Equal(f.t0.Add(time.Minute)) {
			t.Fatalf("phone conversation = %+v", c)
		}
		lc, err := db.Conversation(ctx, f.p1.ID, f.liveChat)
		if err != nil || lc.Kind != "live_chat" || lc.Lead == nil || lc.Lead.ID != f.lead.ID || lc.Status != "live" {
			t.Fatalf("live chat = %+v %v", lc, err)
		}
	})
}

func TestConversationsAcrossProjects(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newConvFixture(t, db)
		if _, err := db.Conversation(ctx, f.p2.ID, f.widget); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("read across projects: %v", err)
		}
		if _, err := db.Conversation(ctx, f.p2.ID, f.call); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("read a call across projects: %v", err)
		}
		for id, want := range map[string]int64{f.widget: f.p1.ID, f.call: f.p1.ID, f.other: f.p2.ID} {
			if p, err := db.ProjectOfConversation(ctx, id); err != nil || p != want {
				t.Errorf("ProjectOfConversation(%s) = %d %v", id, p, err)
			}
		}
		for _, id := range []string{"ses_nope", "call_999", "call_x"} {
			if _, err := db.ProjectOfConversation(ctx, id); !errors.Is(err, agentline.ErrNotFound) {
				t.Errorf("ProjectOfConversation(%s): %v", id, err)
			}
		}
		for _, id := range []string{f.widget, f.call} {
			if err := db.DeleteConversation(ctx, f.p2.ID, id); !errors.Is(err, agentline.ErrNotFound) {
				t.Fatalf("delete across projects: %v", err)
			}
		}
		for _, id := range []string{f.call, f.liveChat} {
			if err := db.DeleteConversation(ctx, f.p1.ID, id); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := db.Conversations(ctx, f.p1.ID, agentline.ConversationFilter{}); !equal(ids(got), []string{f.widget}) {
			t.Fatalf("after delete: %v", ids(got))
		}
		if l, err := db.Lead(ctx, f.p1.ID, f.lead.ID); err != nil || l.SessionID != nil {
			t.Fatalf("the live chat's lead stays, without its session: %+v %v", l, err)
		}
	})
}

// subscribe connects a pretend job queue and a webhook endpoint for every
// event of the project.
func subscribe(t *testing.T, db *store.DB, projectID int64) agentline.WebhookEndpoint {
	t.Helper()
	db.SetOutbox(store.OutboxOptions{Enqueue: func(context.Context, *sql.Tx, []agentline.Job) error { return nil }})
	ep, err := db.CreateWebhook(context.Background(), agentline.WebhookEndpoint{ProjectID: projectID, URL: "https://hooks.example.com/x",
		Events: []string{"*"}, Enabled: true, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func eventTypes(t *testing.T, db *store.DB, projectID, endpointID int64, subject string) []string {
	t.Helper()
	list, err := db.WebhookDeliveries(context.Background(), projectID, endpointID, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i := len(list) - 1; i >= 0; i-- { // oldest first
		if list[i].Subject == subject || subject == "" {
			out = append(out, list[i].EventType)
		}
	}
	return out
}
