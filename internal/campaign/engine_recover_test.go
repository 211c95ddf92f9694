package campaign_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// fakeCarrier is the carrier as the engine and Voicemail see it: the calls
// it placed by number called, and what it was asked.
type fakeCarrier struct {
	mu        sync.Mutex
	placed    map[string][]carrier.FoundCall
	hungUp    []string
	redirects map[string]string
	gone      bool // the call has ended: hang-ups and redirects find nothing
}

func (c *fakeCarrier) HangUp(_ context.Context, sid string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return "", carrier.ErrCallGone
	}
	c.hungUp = append(c.hungUp, sid)
	return agentline.CallCompleted, nil
}

func (c *fakeCarrier) Redirect(_ context.Context, sid, twiml string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return carrier.ErrCallGone
	}
	if c.redirects == nil {
		c.redirects = map[string]string{}
	}
	c.redirects[sid] = twiml
	return nil
}

func (c *fakeCarrier) FindCalls(_ context.Context, from, to string, after time.Time) ([]carrier.FoundCall, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.placed[to], nil
}

// reserve claims a dial of the contact phone and reserves its call, as the
// phone channel does before it asks the carrier; with sid, the carrier's
// answer is recorded too.
func (e *engineEnv) reserve(t *testing.T, phone, sid string) (agentline.CampaignDial, agentline.Call) {
	t.Helper()
	ctx := context.Background()
	ct := e.contacts(t)[phone]
	r, err := e.db.ClaimDial(ctx, agentline.DialClaim{ProjectID: e.project, CampaignID: e.c.ID, ContactID: ct.ID, Now: e.clock.now()})
	if err != nil || r.Result != agentline.Claimed {
		t.Fatalf("claim %+v %v", r, err)
	}
	ref := "ref-" + phone + "-" + sid
	call, err := e.db.ReserveDialCall(ctx, agentline.Call{ProjectID: e.project, AgentID: e.agent, NumberID: &e.dialer.number,
		CallSID: agentline.PendingCallSID(ref), Direction: agentline.CallOutbound, From: e.dialer.from, To: phone,
		Status: agentline.CallQueued, StreamRef: ref}, 1000, r.Dial.ID, 0)
	if err == nil && sid != "" {
		call, err = e.db.AttachCallSID(ctx, e.project, call.ID, sid, agentline.CallQueued)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r.Dial, call
}

// An instance that died between a dial's claim and the carrier's answer
// leaves a dial that recovery settles with what the carrier says, never by
// dialing again: no call record means the carrier was never asked (the
// attempt failed); a placeholder SID is looked for among the calls the
// carrier placed to the contact since: found, the call takes its SID,
// machine detection's verdict and its status (a machine, here, whose end
// settles the dial as voicemail); not found, the call failed
// (not_placed). Dials younger than RecoverAfter are left alone.
func TestEngineRecoversUnfinishedDials(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEngineEnv(t, db, agentline.Campaign{CallingWindow: everyDay, MaxConcurrentCalls: 10, CallsPerSecond: 100,
			MaxAttempts: 2, RetryAfter: time.Hour, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}}, time.Now())
		const noCall, found, notFound, young = "+14155551001", "+14155551002", "+14155551003", "+14155551004"
		e.add(t, noCall, found, notFound, young)
		e.transition(t, agentline.CampaignDraft, agentline.CampaignRunning)
		fc := &fakeCarrier{}
		eng := campaign.NewEngine(campaign.EngineOptions{Store: db, Dialer: e.dialer, Carrier: fc, Now: e.clock.now,
			RecoverAfter: time.Minute, Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
		ct := e.contacts(t)[noCall]
		if r, err := db.ClaimDial(ctx, agentline.DialClaim{ProjectID: e.project, CampaignID: e.c.ID, ContactID: ct.ID,
			Now: e.clock.now()}); err != nil || r.Result != agentline.Claimed {
			t.Fatalf("claim %+v %v", r, err)
		}
		// An earlier call of ours to the number, which the carrier lists too.
		earlier, err := db.ReserveCall(ctx, agentline.Call{ProjectID: e.project, AgentID: e.agent, CallSID: "CA00000000000000000000000000000001",
			Direction: agentline.CallOutbound, From: e.dialer.from, To: found, Status: agentline.CallQueued}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		e.reserve(t, found, "")
		e.reserve(t, notFound, "")
		fc.placed = map[string][]carrier.FoundCall{found: {
			{SID: "CA00000000000000000000000000000002", CallState: carrier.CallState{Status: agentline.CallCompleted,
				AnsweredBy: agentline.AnsweredByMachineStart}},
			{SID: earlier.CallSID, CallState: carrier.CallState{Status: agentline.CallCompleted}},
		}}
		if err := eng.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		if cs := e.contacts(t); cs[noCall].Status != agentline.ContactCalling || cs[found].Status != agentline.ContactCalling {
			t.Fatalf("recovered dials younger than RecoverAfter: %+v", cs)
		}
		e.clock.set(time.Now().Add(2 * time.Minute))
		e.reserve(t, young, "")
		if err := eng.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		cs := e.contacts(t)
		want := map[string]string{noCall: agentline.ContactFailed, found: agentline.ContactVoicemail, notFound: agentline.ContactFailed}
		for phone, outcome := range want {
			if ct := cs[phone]; ct.Status != agentline.ContactPending || ct.LastOutcome == nil || ct.LastOutcome.Outcome != outcome {
				t.Errorf("%s: %s, last outcome %+v; want pending again after %s", phone, ct.Status, ct.LastOutcome, outcome)
			}
		}
		if c, err := db.Call(ctx, e.project, "CA00000000000000000000000000000002"); err != nil || c.Status != agentline.CallCompleted ||
			c.AnsweredBy != agentline.AnsweredByMachineStart ||
			c.ID != *cs[found].Dials[0].CallID {
			t.Errorf("the found call %+v %v", c, err)
		}
		failed, _ := db.Calls(ctx, e.project, agentline.CallFilter{Status: agentline.CallFailed})
		if len(failed) != 1 || failed[0].ID != *cs[notFound].Dials[0].CallID || failed[0].EndReason != campaign.EndReasonNotPlaced {
			t.Errorf("the call the carrier never got: %+v", failed)
		}
		if cs[young].Status != agentline.ContactCalling {
			t.Errorf("a young dial was recovered: %+v", cs[young])
		}
	})
}

// Voicemail hangs up on a machine when the campaign says hang_up; with
// leave_message it waits for the end of the greeting, marks the dial and
// speaks the message (<Say> then <Hangup/>), so that the call's end is a
// final voicemail with no retry; a message that cannot be spoken (the call
// ended) is unmarked and the voicemail retried. A person is left to the
// agent, and a call of no campaign to others.
func TestVoicemail(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEngineEnv(t, db, agentline.Campaign{CallingWindow: everyDay, MaxConcurrentCalls: 10, CallsPerSecond: 100,
			MaxAttempts: 3, RetryAfter: time.Hour,
			Voicemail: agentline.Voicemail{Action: agentline.VoicemailLeaveMessage, Message: "Please call us back."}}, time.Now())
		const left, gone, person = "+14155551007", "+14155551017", "+14155551001"
		e.add(t, left, gone, person)
		e.transition(t, agentline.CampaignDraft, agentline.CampaignRunning)
		fc := &fakeCarrier{}
		vm := campaign.NewVoicemail(db, fc, nil)
		end := func(call agentline.Call, by string) {
			t.Helper()
			if _, _, err := db.RecordAnsweredBy(ctx, e.project, call.CallSID, by); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: call.CallSID, Status: agentline.CallCompleted}, conversation.CallChanged); err != nil {
				t.Fatal(err)
			}
		}
		_, call := e.reserve(t, left, "CA00000000000000000000000000000007")
		for _, by := range []string{agentline.AnsweredByMachineStart, agentline.AnsweredByMachineEndBeep} {
			if err := vm.Answered(ctx, call, by); err != nil {
				t.Fatal(err)
			}
		}
		if doc := fc.redirects[call.CallSID]; !strings.Contains(doc, "<Say>Please call us back.</Say><Hangup") || len(fc.hungUp) != 0 {
			t.Fatalf("redirect %q, hang-ups %v", doc, fc.hungUp)
		}
		end(call, agentline.AnsweredByMachineEndBeep)
		if ct := e.contacts(t)[left]; ct.Status != agentline.ContactVoicemail || ct.NextAttemptAt != nil {
			t.Fatalf("after a message left: %+v", ct)
		}

		_, call = e.reserve(t, gone, "CA00000000000000000000000000000017")
		fc.gone = true
		if err := vm.Answered(ctx, call, agentline.AnsweredByMachineEndSilence); err != nil {
			t.Fatal(err)
		}
		end(call, agentline.AnsweredByMachineEndSilence)
		if ct := e.contacts(t)[gone]; ct.Status != agentline.ContactPending || ct.LastOutcome.Outcome != agentline.ContactVoicemail {
			t.Fatalf("a message that could not be left: %+v %+v", ct, ct.LastOutcome)
		}
		fc.gone = false

		_, call = e.reserve(t, person, "CA00000000000000000000000000000001")
		if err := vm.Answered(ctx, call, agentline.AnsweredByHuman); err != nil || len(fc.hungUp) != 0 || len(fc.redirects) != 1 {
			t.Fatalf("a person: %v %v %v", err, fc.hungUp, fc.redirects)
		}
		// hang_up: the machine is hung up on at once.
		c := e.campaign(t)
		c.Voicemail = agentline.Voicemail{Action: agentline.VoicemailHangUp}
		if _, err := db.UpdateCampaign(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := vm.Answered(ctx, call, agentline.AnsweredByMachineStart); err != nil || len(fc.hungUp) != 1 || fc.hungUp[0] != call.CallSID {
			t.Fatalf("hang_up: %v %v", err, fc.hungUp)
		}
		stranger := agentline.Call{ID: 1 << 40, ProjectID: e.project, CallSID: "CA99"}
		if err := vm.Answered(ctx, stranger, agentline.AnsweredByMachineStart); err != nil || len(fc.hungUp) != 1 {
			t.Fatalf("a call of no campaign: %v %v", err, fc.hungUp)
		}
	})
}
