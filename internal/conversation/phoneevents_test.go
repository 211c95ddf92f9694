package conversation_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A number bought and released, and a call's status reports, reach a
// subscribed endpoint as events written in the same transaction: one
// call.status_changed per change, conversation.started when the call goes
// in progress and conversation.ended when it ends; a report that changes
// nothing emits nothing, and another project's endpoint hears none of it.
func TestPhoneEvents(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		jobs := 0
		db.SetOutbox(store.OutboxOptions{Enqueue: func(ctx context.Context, tx *sql.Tx, js []agentline.Job) error {
			for _, j := range js {
				if _, ok := j.(agentline.DeliverWebhook); ok {
					jobs++
				}
			}
			return nil
		}})
		u := mustUser(t, db, "a@example.com")
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		other, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
		ada := mustAgent(t, db, p.ID, "Ada")
		hook, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: p.ID, URL: "https://hooks.example.com/a", Events: []string{"*"}, Enabled: true, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
		if err != nil {
			t.Fatal(err)
		}
		stranger, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: other.ID, URL: "https://hooks.example.com/b", Events: []string{"*"}, Enabled: true, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
		if err != nil {
			t.Fatal(err)
		}
		n, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550100", AgentID: &ada.ID, Status: agentline.NumberActive, CarrierSID: "PN1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []agentline.CallEvent{
			{CallSID: "CA1", Status: agentline.CallRinging, Direction: agentline.CallInbound, From: "+14155550199", To: n.PhoneNumber},
			{CallSID: "CA1", Status: agentline.CallRinging},
			{CallSID: "CA1", Status: agentline.CallInProgress},
			{CallSID: "CA1", Status: agentline.CallCompleted, EndReason: "caller_hangup"},
		} {
			if _, err := db.ApplyCallEvent(ctx, e, conversation.CallChanged); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.DeletePhoneNumber(ctx, p.ID, n.ID); err != nil {
			t.Fatal(err)
		}
		list, err := db.WebhookDeliveries(ctx, p.ID, hook.ID, 50, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range list {
			got = append(got, d.EventType)
		}
		slices.Reverse(got) // newest first
		want := []string{
			agentline.EventNumberProvisioned,
			agentline.EventCallStatusChanged,
			agentline.EventCallStatusChanged, agentline.EventConversationStarted,
			agentline.EventCallStatusChanged, agentline.EventConversationEnded,
			agentline.EventNumberReleased,
		}
		if !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		if _, err := db.DispatchDeliveries(ctx, 100, nil); err != nil {
			t.Fatal(err)
		}
		if jobs != len(want) {
			t.Fatalf("%d delivery jobs enqueued, want %d", jobs, len(want))
		}
		if l, err := db.WebhookDeliveries(ctx, other.ID, stranger.ID, 50, 0); err != nil || len(l) != 0 {
			t.Fatalf("another project's endpoint got %d deliveries, %v", len(l), err)
		}
	})
}
