package app_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
)

// Conversations of every kind through the wired app: a widget session that
// ends, one that goes quiet and is abandoned by the periodic sweep (River,
// with a 1 s idle timeout), a live chat and a phone call stored directly;
// the list, one conversation, another tenant's 404, and analytics whose
// numbers match the records.
func TestConversationsThroughTheApp(t *testing.T) {
	t.Parallel()
	w := startWidgetSite(t, store.SQLite, map[string]string{"AGENTLINE_SESSION_IDLE_TIMEOUT": "1s"})
	s, tok, p, a, c := w.s, w.token, w.project, w.agent, w.channel
	ctx := context.Background()
	_, stranger := s.NewUser(t, "stranger@example.com")
	widget := func(path string, body any) *apptest.Response { return w.do(t, "POST", path, body) }
	ended, quiet := w.session(t), w.session(t)
	now := time.Now().UTC()
	say := map[string]any{"type": "transcript", "at": now, "data": map[string]string{"role": "user", "text": "Where is my parcel?"}}
	widget("/widget/v1/analytics", map[string]any{"session_id": ended, "events": []any{say,
		map[string]any{"type": "heartbeat", "at": now.Add(time.Second)},
		map[string]any{"type": "session_ended", "at": now.Add(2 * time.Second)}}})
	widget("/widget/v1/analytics", map[string]any{"session_id": quiet, "events": []any{say}})

	db := s.App.Store
	if _, err := db.CreateLead(ctx, agentline.Lead{ProjectID: p.ID, ChannelID: c.ID, Mode: agentline.FormLiveChat, Answers: map[string]any{}},
		&agentline.WidgetSession{ID: "ses_livechat", ProjectID: p.ID, ChannelID: c.ID, AgentID: a.ID}); err != nil {
		t.Fatal(err)
	}
	call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: a.ID, CallSID: "CA9", Direction: agentline.CallInbound,
		From: "+14155550199", To: "+14155550100", Status: agentline.CallRinging}, 10)
	if err != nil {
		t.Fatal(err)
	}
	d := 30
	if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA9", Status: agentline.CallCompleted, DurationS: &d}, conversation.CallChanged); err != nil {
		t.Fatal(err)
	}

	// The periodic sweep abandons the quiet session (bounded wait).
	var q agentline.Conversation
	for i := 0; i < 300 && q.Status != agentline.ConversationAbandoned; i++ {
		time.Sleep(100 * time.Millisecond)
		s.Must(t, 200, "GET", "/api/conversations/"+quiet, tok, nil, &q)
	}
	if q.Status != "abandoned" || q.EndReason != "idle_timeout" || q.EndedAt == nil || !q.EndedAt.Equal(now) {
		t.Fatalf("quiet session = %+v", q)
	}
	var e agentline.Conversation
	s.Must(t, 200, "GET", "/api/conversations/"+ended, tok, nil, &e)
	if e.Status != "ended" || e.DurationMS <= 0 || len(e.Transcript) != 1 {
		t.Fatalf("ended session = %+v", e)
	}
	s.Must(t, 404, "GET", "/api/conversations/"+ended, stranger, nil, nil)
	s.Must(t, 404, "GET", "/api/conversations/"+agentline.CallConversationID(call.ID), stranger, nil, nil)
	s.Must(t, 404, "DELETE", "/api/conversations/"+ended, stranger, nil, nil)
	s.Must(t, 404, "GET", "/api/projects/"+itoa(p.ID)+"/conversations", stranger, nil, nil)
	s.Must(t, 400, "GET", "/api/projects/"+itoa(p.ID)+"/conversations?kind=fax", tok, nil, nil)
	s.Must(t, 400, "GET", "/api/projects/"+itoa(p.ID)+"/conversations?cursor=nope", tok, nil, nil)

	var list struct {
		Conversations []agentline.Conversation `json:"conversations"`
		NextCursor    *string                  `json:"next_cursor"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/conversations?limit=3", tok, nil, &list)
	if len(list.Conversations) != 3 || list.NextCursor == nil {
		t.Fatalf("page 1: %+v", list)
	}
	var rest struct {
		Conversations []agentline.Conversation `json:"conversations"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/conversations?limit=3&cursor="+*list.NextCursor, tok, nil, &rest)
	all := append(list.Conversations, rest.Conversations...)
	if len(all) != 4 {
		t.Fatalf("%d conversations", len(all))
	}
	var ms int64
	kinds := map[string]int64{}
	for _, c := range all {
		ms += c.DurationMS
		kinds[c.Kind]++
	}

	var an struct {
		Totals        struct{ Sessions int64 }
		Conversations struct {
			Totals struct {
				Conversations, Leads int64
				Minutes              float64
			}
			ByKind []struct {
				Kind          string
				Conversations int64
			} `json:"by_kind"`
		}
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/analytics", tok, nil, &an)
	tot := an.Conversations.Totals
	if an.Totals.Sessions != 3 || tot.Conversations != 4 || tot.Leads != 1 || int64(tot.Minutes*60000+0.5) != ms {
		t.Fatalf("analytics %+v, want 4 conversations, 1 lead, %d ms", an, ms)
	}
	for _, k := range an.Conversations.ByKind {
		if kinds[k.Kind] != k.Conversations {
			t.Errorf("by_kind %s = %d, records %d", k.Kind, k.Conversations, kinds[k.Kind])
		}
	}
	r := s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/analytics.csv", tok, nil, nil)
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][0] != "day" {
		t.Fatalf("csv %v %q", err, r.Body)
	}
	s.Must(t, 204, "DELETE", "/api/conversations/"+ended, tok, nil, nil)
	s.Must(t, 404, "GET", "/api/conversations/"+ended, tok, nil, nil)
}
