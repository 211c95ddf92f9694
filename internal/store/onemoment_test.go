package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A conversation is read at one moment: a call that ends and has its
// recording stored while the conversation is being read (between the
// read's first statement and its second) shows either before both or after
// both, never still live beside its stored recording. Read statement by
// statement, as before, it shows the mix; the API then answered such a
// conversation to whoever waited for its recording.
func TestConversationReadsOneMoment(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		n := 0
		for _, inTx := range []bool{false, true} {
			n++
			sid := fmt.Sprintf("CAmoment%d", n)
			call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: sid, Direction: agentline.CallInbound,
				From: "+14155550199", To: "+14155550100", Status: agentline.CallInProgress}, 10)
			if err != nil {
				t.Fatal(err)
			}
			end := func() {
				if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: agentline.CallCompleted, EndReason: "caller_hangup"}, nil); err != nil {
					t.Fatal(err)
				}
				if err := db.AddRecording(ctx, agentline.CallRecording{CallID: call.ID, ProjectID: f.p1.ID,
					Key: agentline.RecordingKey(f.p1.ID, call.ID), Status: agentline.RecordingStored, SizeBytes: 64044, DurationMS: 2000}); err != nil {
					t.Fatal(err)
				}
			}
			id := agentline.CallConversationID(call.ID)
			conv, err := db.ConversationWithWriteBetween(ctx, f.p1.ID, id, inTx, end)
			if err != nil {
				t.Fatal(err)
			}
			mixed := conv.EndedAt == nil && conv.Recording != nil
			if !inTx && !mixed {
				t.Fatalf("read statement by statement, the write did not land between them: %+v", conv)
			}
			if inTx && (conv.EndedAt != nil || conv.Recording != nil) {
				t.Fatalf("read in one transaction, the conversation shows the write made during it: ended %v, recording %+v", conv.EndedAt, conv.Recording)
			}
			if conv, err := db.Conversation(ctx, f.p1.ID, id); err != nil || conv.EndedAt == nil || conv.Recording == nil {
				t.Fatalf("read after the write: ended %v, recording %+v, %v", conv.EndedAt, conv.Recording, err)
			}
		}
	})
}

// A campaign and its counts, and a page of contacts and their dials, are
// read at one moment too: contacts added, or a contact claimed for a dial,
// between the read's first statement and its second are in neither part
// of the answer. Statement by statement they show in the second part only.
func TestCampaignReadsOneMoment(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newEngineFixture(t, db, "+14155550101")
		more := 0
		addTwo := func() {
			more += 2
			if _, _, _, err := db.AddContacts(ctx, f.p1.ID, f.c.ID, contacts(fmt.Sprint("+1415555020", more), fmt.Sprint("+1415555021", more)), 100); err != nil {
				t.Fatal(err)
			}
		}
		for _, inTx := range []bool{false, true} {
			before := 1 + more
			c, err := db.CampaignWithWriteBetween(ctx, f.p1.ID, f.c.ID, inTx, addTwo)
			if err != nil {
				t.Fatal(err)
			}
			want := before
			if !inTx {
				want += 2 // the test's own power: the write lands between the reads
			}
			if c.Counts.Pending != want {
				t.Fatalf("in one transaction %v: %d pending, want %d", inTx, c.Counts.Pending, want)
			}
		}

		first := f.contact(t, db, 0)
		claimed := 0
		claim := func() {
			ct := f.contact(t, db, claimed)
			claimed++
			r, err := db.ClaimDial(ctx, agentline.DialClaim{ProjectID: f.p1.ID, CampaignID: f.c.ID, ContactID: ct.ID,
				Now: time.Now().UTC().Add(time.Duration(claimed) * time.Hour), Interval: time.Millisecond})
			if err != nil || r.Result != agentline.Claimed {
				t.Fatalf("claim: %+v %v", r, err)
			}
		}
		for _, inTx := range []bool{false, true} {
			list, err := db.CampaignContactsWithWriteBetween(ctx, f.p1.ID, f.c.ID, inTx, claim)
			if err != nil {
				t.Fatal(err)
			}
			ct := list[claimed-1]
			if ct.Status != agentline.ContactPending {
				t.Fatalf("contact %d read before its claim shows %s", ct.ID, ct.Status)
			}
			if mixed := len(ct.Dials) > 0; mixed != !inTx {
				t.Fatalf("in one transaction %v: pending contact %d shows %d dials", inTx, ct.ID, len(ct.Dials))
			}
		}
		if list, err := db.CampaignContacts(ctx, f.p1.ID, f.c.ID, "", 0, 100); err != nil || list[0].ID != first.ID ||
			list[0].Status != agentline.ContactCalling || len(list[0].Dials) != 1 {
			t.Fatalf("read after the claims: %+v %v", list, err)
		}
	})
}

// A page of widget sessions and their events, and a webhook delivery and
// its attempts, are read at one moment as well: a session that ends, or a
// delivery that is attempted, between the read's two statements shows in
// neither part of the answer.
func TestSessionsAndDeliveriesReadOneMoment(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		n := 0
		for _, inTx := range []bool{false, true} {
			n++
			id := fmt.Sprintf("ses_moment%d", n)
			if _, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: id, ProjectID: f.p2.ID, ChannelID: f.c2.ID, AgentID: f.a2.ID,
				Provider: agentline.ProviderOpenAI, Model: "gpt-realtime", StartedAt: time.Now().UTC().Add(time.Duration(n) * time.Second)}, started); err != nil {
				t.Fatal(err)
			}
			end := func() {
				if err := db.AddSessionEvents(ctx, f.p2.ID, id, []agentline.SessionEvent{{Type: agentline.EventSessionEnded, At: time.Now().UTC()}}, ended); err != nil {
					t.Fatal(err)
				}
			}
			list, err := db.WidgetSessionsWithWriteBetween(ctx, f.p2.ID, inTx, end)
			if err != nil || len(list) == 0 || list[0].ID != id {
				t.Fatalf("sessions: %+v %v", list, err)
			}
			s := list[0]
			if s.EndedAt != nil {
				t.Fatalf("session read before its end shows it ended at %v", s.EndedAt)
			}
			if mixed := len(s.Events) > 0; mixed != !inTx {
				t.Fatalf("in one transaction %v: session %s, not ended, shows events %+v", inTx, id, s.Events)
			}
		}

		db.SetOutbox(store.OutboxOptions{Enqueue: func(context.Context, *sql.Tx, []agentline.Job) error { return nil }})
		hook, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: f.p1.ID, URL: "https://hooks.example.com/x",
			Events: []string{"*"}, Enabled: true, Secret: "whsec_dGVzdA=="})
		if err != nil {
			t.Fatal(err)
		}
		for _, inTx := range []bool{false, true} {
			d, err := db.SendTestEvent(ctx, f.p1.ID, hook.ID, agentline.Event{ID: fmt.Sprint("evt_moment", inTx), Type: "webhook.test", ProjectID: f.p1.ID, Data: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			attempt := func() {
				if err := db.RecordAttempt(ctx, d.ID, agentline.WebhookAttempt{At: time.Now().UTC(), StatusCode: 500}, agentline.DeliveryPending); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.WebhookDeliveryWithWriteBetween(ctx, f.p1.ID, hook.ID, d.ID, inTx, attempt)
			if err != nil {
				t.Fatal(err)
			}
			if mixed := got.Attempts != len(got.History); mixed != !inTx {
				t.Fatalf("in one transaction %v: %d attempts with a history of %d", inTx, got.Attempts, len(got.History))
			}
			if got, err := db.WebhookDelivery(ctx, f.p1.ID, hook.ID, d.ID); err != nil || got.Attempts != 1 || len(got.History) != 1 {
				t.Fatalf("read after the attempt: %+v %v", got, err)
			}
		}
	})
}
