package conversation_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A widget conversation's start and end reach a subscribed endpoint as
// conversation.started and conversation.ended, each with the conversation
// as its transaction left it, whichever way it started (a session, a live
// chat's pending session opened) or ended (the client's session_ended, the
// sweeper's abandon); a second end emits nothing.
func TestWidgetConversationEvents(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		ep := subscribe(t, db, f.p1.ID)
		start := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
		for _, id := range []string{"ses_a", "ses_idle"} {
			if _, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: id, ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID,
				Provider: agentline.ProviderOpenAI, StartedAt: start}, conversation.Started); err != nil {
				t.Fatal(err)
			}
		}
		gate := agentline.WidgetSession{ID: "ses_gate", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID}
		if _, err := db.CreateLead(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLiveChat, Answers: map[string]any{}}, &gate); err != nil {
			t.Fatal(err)
		}
		gate.Provider, gate.Model = agentline.ProviderOpenAI, "gpt-realtime"
		if _, err := db.StartWidgetSession(ctx, gate, conversation.Started); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second session_ended ends nothing
			if err := db.AddSessionEvents(ctx, f.p1.ID, "ses_a", []agentline.SessionEvent{{Type: agentline.EventSessionEnded, At: start.Add(time.Minute),
				Data: json.RawMessage(`{"reason":"user_left"}`)}}, conversation.Ended); err != nil {
				t.Fatal(err)
			}
		}
		later := time.Now().UTC().Add(time.Minute)
		if n, err := db.AbandonIdleSessions(ctx, later, later, conversation.Ended); err != nil || n != 2 {
			t.Fatalf("sweep = %d %v, want 2", n, err)
		}
		want := map[string]string{"ses_a": agentline.ConversationEnded, "ses_idle": agentline.ConversationAbandoned, "ses_gate": agentline.ConversationAbandoned}
		for id, status := range want {
			list := deliveries(t, db, f.p1.ID, ep.ID, id)
			if got := eventTypes(list); !slices.Equal(got, []string{agentline.EventConversationStarted, agentline.EventConversationEnded}) {
				t.Fatalf("%s: events %v", id, got)
			}
			for i, wantStatus := range []string{agentline.ConversationLive, status} {
				d, _, err := db.PendingDelivery(ctx, list[i].ID)
				if err != nil {
					t.Fatal(err)
				}
				var body struct {
					Data agentline.ConversationEventData `json:"data"`
				}
				if err := json.Unmarshal(d.Body, &body); err != nil {
					t.Fatal(err)
				}
				if c := body.Data.Conversation; c.ID != id || c.Status != wantStatus || c.AgentID != f.a1.ID {
					t.Errorf("%s %s: conversation %+v, want status %s", id, d.EventType, c, wantStatus)
				}
			}
		}
	})
}
