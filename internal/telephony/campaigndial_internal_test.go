package telephony

import (
	"context"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// A campaign's call (CallOptions.Dial) is linked to its dial in the
// reservation's transaction, before the carrier is asked; a dial that has a
// call already is never placed again; and a request the carrier does not
// answer keeps the reserved record, linked, with its pending SID, for the
// engine's recovery to settle with the carrier (a call that the carrier
// refuses loses it, as every refused call does).
func TestPlaceCampaignCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newOpsEnv(t, nil)
	e.number(t, "+14155550100", e.ada)
	c, err := e.db.CreateCampaign(ctx, agentline.Campaign{ProjectID: e.project, AgentID: e.ada, Name: "Renewals",
		CallingWindow: agentline.CallingWindow{Days: []string{"mon"}, Start: "09:00", End: "17:00"}, MaxConcurrentCalls: 5,
		CallsPerSecond: 100, MaxAttempts: 2, RetryAfter: time.Hour, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}})
	if err != nil {
		t.Fatal(err)
	}
	numbers := []string{"+14155550101", "+14155550102", "+14155550103"}
	var cs []agentline.CampaignContact
	for _, n := range numbers {
		cs = append(cs, agentline.CampaignContact{PhoneNumber: n, Variables: map[string]string{"name": "Ann"}})
	}
	if _, _, _, err := e.db.AddContacts(ctx, e.project, c.ID, cs, 10); err != nil {
		t.Fatal(err)
	}
	mustExec(t, e, `UPDATE campaigns SET status = 'running'`)
	list, _ := e.db.CampaignContacts(ctx, e.project, c.ID, "", 0, 10)
	at := time.Now().Add(time.Second)
	claim := func(ct agentline.CampaignContact) agentline.CampaignDial {
		t.Helper()
		at = at.Add(time.Second)
		r, err := e.db.ClaimDial(ctx, agentline.DialClaim{ProjectID: e.project, CampaignID: c.ID, ContactID: ct.ID, Now: at, Interval: time.Millisecond})
		if err != nil || r.Result != agentline.Claimed {
			t.Fatalf("claim %+v %v", r, err)
		}
		return r.Dial
	}
	place := func(ct agentline.CampaignContact, d agentline.CampaignDial) (agentline.Call, error) {
		return e.h.PlaceCall(ctx, e.project, e.ada, ct.PhoneNumber, CallOptions{MachineDetection: carrier.AMDEnable, Dial: d.ID})
	}

	d := claim(list[0])
	call, err := place(list[0], d)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := e.db.CampaignContacts(ctx, e.project, c.ID, "", 0, 1)
	if got[0].Dials[0].CallID == nil || *got[0].Dials[0].CallID != call.ID || *got[0].LastCallID != call.ID {
		t.Fatalf("the dial and contact after the call: %+v", got[0])
	}
	if _, err := place(list[0], d); agentline.ErrorCode(err) != agentline.EConflict || len(e.fake.Calls()) != 1 {
		t.Fatalf("placing a dial again: %v, %d calls at the carrier", err, len(e.fake.Calls()))
	}

	// The carrier does not answer in time: the record stays, linked.
	e.carrierTimeout(t, 300*time.Millisecond)
	e.fake.AnswerLateNext(time.Second)
	d = claim(list[1])
	if _, err := place(list[1], d); agentline.ErrorCode(err) != agentline.ECarrier {
		t.Fatalf("unanswered request: %v", err)
	}
	got, _ = e.db.CampaignContacts(ctx, e.project, c.ID, "", list[0].ID, 1)
	if got[0].Status != agentline.ContactCalling || got[0].Dials[0].CallID == nil {
		t.Fatalf("the dial of an unanswered request: %+v", got[0])
	}
	stale, err := e.db.StaleDials(ctx, time.Now().Add(time.Hour), 10)
	if err != nil || len(stale) != 1 || stale[0].Dial.ID != d.ID || stale[0].CallSID[:8] != "pending:" || stale[0].To != list[1].PhoneNumber {
		t.Fatalf("stale dials %+v %v", stale, err)
	}

	// The carrier refuses: the record goes, the dial has no call.
	e.fake.FailNext(400, 21211, "Invalid 'To' Phone Number")
	d = claim(list[2])
	if _, err := place(list[2], d); agentline.ErrorCode(err) != agentline.ECarrier {
		t.Fatalf("refused: %v", err)
	}
	got, _ = e.db.CampaignContacts(ctx, e.project, c.ID, "", list[1].ID, 1)
	if got[0].Dials[0].CallID != nil {
		t.Fatalf("the dial of a refused call: %+v", got[0])
	}
}

func mustExec(t *testing.T, e *opsEnv, statement string) {
	t.Helper()
	if err := e.db.ExecAdmin(context.Background(), statement); err != nil {
		t.Fatal(err)
	}
}
