package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// TestRecordInboundCall: the voice webhook's report of a call new to us is
// inserted in one statement with its number's project, agent and id, as
// the report leaves it, in the transaction that reads the number's
// published agent, and its follow-up runs as for a new call; the carrier's
// retry of the webhook finds the call and changes nothing; a number
// without an agent, none of ours, or an agent that take refuses records
// nothing.
func TestRecordInboundCall(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		ada := mustAgent(t, db, p.ID, "Ada")
		n, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550100", AgentID: &ada.ID, Status: agentline.NumberActive, CarrierSID: "PN1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550111", Status: agentline.NumberUnassigned, CarrierSID: "PN2"}); err != nil {
			t.Fatal(err)
		}
		var follows []string
		follow := func(_ context.Context, _ agentline.ConversationTx, previous string, call agentline.Call) error {
			follows = append(follows, previous+">"+call.Status)
			return nil
		}
		at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
		ring := agentline.CallEvent{CallSID: "CA1", Status: agentline.CallRinging, Direction: agentline.CallInbound, From: "+14155550199", To: n.PhoneNumber, At: at}
		var asked []string
		take := func(a agentline.Agent) error {
			asked = append(asked, a.Name)
			return nil
		}
		before := db.Statements()
		c, a, err := db.RecordInboundCall(ctx, ring, take, follow)
		if err != nil || c.ID == 0 || c.ProjectID != p.ID || c.AgentID != ada.ID || c.NumberID == nil || *c.NumberID != n.ID || c.Status != agentline.CallRinging {
			t.Fatalf("new inbound call = %+v %v", c, err)
		}
		if a.ID != ada.ID || a.ProjectID != p.ID || a.Running != a.PublishedVersion || len(asked) != 1 || asked[0] != ada.Name {
			t.Fatalf("the number's agent = %+v, take asked about %q", a, asked)
		}
		if s := db.Statements() - before; s > 5 { // BEGIN, the agent's read, the insert, COMMIT, and the webhook endpoints' read
			t.Errorf("a new inbound call took %d statements, want at most 5", s)
		}
		stored, err := db.CallBySID(ctx, "CA1")
		if err != nil || stored.ID != c.ID || stored.Status != agentline.CallRinging || stored.From != ring.From || stored.To != ring.To ||
			stored.Direction != agentline.CallInbound || stored.NumberID == nil || *stored.NumberID != n.ID || stored.StartedAt != nil {
			t.Fatalf("stored = %+v %v", stored, err)
		}
		// The carrier retries its webhook: the same call, nothing new.
		again, _, err := db.RecordInboundCall(ctx, ring, take, follow)
		if err != nil || again.ID != c.ID || again.Status != agentline.CallRinging {
			t.Fatalf("retried webhook = %+v %v", again, err)
		}
		if len(follows) != 2 || follows[0] != ">ringing" || follows[1] != "ringing>ringing" {
			t.Errorf("follow-ups %q, want the new call's, then the retry's (no change)", follows)
		}
		for _, to := range []string{"+14155550111", "+14155550122"} {
			e := ring
			e.CallSID, e.To = "CA2", to
			if _, _, err := db.RecordInboundCall(ctx, e, take, follow); !errors.Is(err, agentline.ErrNotFound) {
				t.Errorf("a call to %s: %v, want not found", to, err)
			}
		}
		refused := errors.New("the agent takes no calls")
		e := ring
		e.CallSID = "CA3"
		if _, _, err := db.RecordInboundCall(ctx, e, func(agentline.Agent) error { return refused }, follow); !errors.Is(err, refused) {
			t.Errorf("a call the agent does not take: %v, want take's error", err)
		}
		if len(asked) != 2 {
			t.Errorf("take asked %d times, want twice (a number without an agent asks nothing)", len(asked))
		}
		if calls, err := db.Calls(ctx, p.ID, agentline.CallFilter{}); err != nil || len(calls) != 1 {
			t.Fatalf("calls = %+v %v", calls, err)
		}
	})
}
