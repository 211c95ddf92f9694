package store_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A conversation's deliveries are its own events' (one per change of the
// call's status here), to every endpoint of its project with the
// endpoint's URL, newest first; another conversation's and another
// project's are not among them.
func TestConversationDeliveries(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		db.SetOutbox(store.OutboxOptions{Enqueue: func(context.Context, *sql.Tx, []agentline.Job) error { return nil }})
		f := newWidgetFixture(t, db)
		for _, e := range []agentline.WebhookEndpoint{
			{ProjectID: f.p1.ID, URL: "https://hooks.example.com/a", Events: []string{"*"}, Enabled: true, Secret: secret},
			{ProjectID: f.p2.ID, URL: "https://hooks.example.com/b", Events: []string{"*"}, Enabled: true, Secret: secret},
		} {
			if _, err := db.CreateWebhook(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		call := func(p agentline.Project, a agentline.Agent, sid string) string {
			t.Helper()
			c, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: a.ID, CallSID: sid, Direction: agentline.CallOutbound,
				From: "+14155550100", To: "+14155550199", Status: agentline.CallQueued}, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range []string{agentline.CallInProgress, agentline.CallCompleted} {
				if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: st, At: time.Now()}, callChanged); err != nil {
					t.Fatal(err)
				}
			}
			return agentline.CallConversationID(c.ID)
		}
		mine, sibling, other := call(f.p1, f.a1, "CA1"), call(f.p1, f.a1, "CA2"), call(f.p2, f.a2, "CA3")
		list, err := db.ConversationDeliveriesBefore(ctx, f.p1.ID, mine, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for i, d := range list {
			types = append(types, d.EventType)
			if d.WebhookURL != "https://hooks.example.com/a" || d.Status != agentline.DeliveryPending || d.ProjectID != f.p1.ID {
				t.Errorf("delivery %d: %+v", i, d)
			}
			if i > 0 && d.ID > list[i-1].ID {
				t.Errorf("deliveries not newest first: %d after %d", d.ID, list[i-1].ID)
			}
		}
		if !slices.Equal(types, []string{agentline.EventCallStatusChanged, agentline.EventCallStatusChanged}) {
			t.Errorf("event types of %s: %v", mine, types)
		}
		if few, _ := db.ConversationDeliveriesBefore(ctx, f.p1.ID, mine, 0, 1); len(few) != 1 {
			t.Errorf("limit 1 gave %d", len(few))
		}
		// Another project's conversation is not found through this project.
		if none, _ := db.ConversationDeliveriesBefore(ctx, f.p1.ID, other, 0, 50); len(none) != 0 {
			t.Errorf("project 1 sees %d deliveries of project 2's conversation", len(none))
		}
		if sib, _ := db.ConversationDeliveriesBefore(ctx, f.p1.ID, sibling, 0, 50); len(sib) != len(list) {
			t.Errorf("the sibling call has %d deliveries, want %d of its own", len(sib), len(list))
		}
	})
}
