package store_test

import (
	"context"
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
