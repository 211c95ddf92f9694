package store_test

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// engineFixture is a running campaign of the first project with a webhook
// endpoint that takes every event, and the jobs its writes enqueue.
type engineFixture struct {
	widgetFixture
	c      agentline.Campaign
	hook   agentline.WebhookEndpoint
	queued *[]agentline.Job
}

func newEngineFixture(t *testing.T, db *store.DB, numbers ...string) engineFixture {
	t.Helper()
	ctx := context.Background()
	f := engineFixture{widgetFixture: newWidgetFixture(t, db), queued: &[]agentline.Job{}}
	db.SetOutbox(store.OutboxOptions{Enqueue: func(_ context.Context, _ *sql.Tx, js []agentline.Job) error {
		*f.queued = append(*f.queued, js...)
		return nil
	}})
	var err error
	if f.hook, err = db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: f.p1.ID, URL: "https://hooks.example.com/x",
		Events: []string{"*"}, Enabled: true, Secret: "whsec_dGVzdA=="}); err != nil {
		t.Fatal(err)
	}
	f.c = newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
	cs := contacts(numbers...)
	for i := range cs {
		cs[i].Consent = &agentline.ContactConsent{Source: "web form"}
	}
	if _, _, _, err := db.AddContacts(ctx, f.p1.ID, f.c.ID, cs, 100); err != nil {
		t.Fatal(err)
	}
	if f.c, _, err = db.TransitionCampaign(ctx, f.p1.ID, f.c.ID, []string{agentline.CampaignDraft}, agentline.CampaignRunning); err != nil {
		t.Fatal(err)
	}
	return f
}

// events lists the types of the events emitted to the fixture's endpoint
// so far, oldest first.
func (f engineFixture) events(t *testing.T, db *store.DB) []string {
	t.Helper()
	ds, err := db.WebhookDeliveries(context.Background(), f.p1.ID, f.hook.ID, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range slices.Backward(ds) {
		out = append(out, d.EventType)
	}
	return out
}

func (f engineFixture) contact(t *testing.T, db *store.DB, n int) agentline.CampaignContact {
	t.Helper()
	list, err := db.CampaignContacts(context.Background(), f.p1.ID, f.c.ID, "", 0, 100)
	if err != nil || len(list) <= n {
		t.Fatalf("contacts %+v %v", list, err)
	}
	return list[n]
}

// A claim takes the campaign's rate slot, counts live dials against the
// limit, skips numbers on the do-not-call list, and logs one dial per
// attempt with its consent; a running campaign alone is dialed.
func TestClaimDial(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newEngineFixture(t, db, "+14155550101", "+14155550102", "+14155550103", "+14155550104")
		if !slices.Contains(*f.queued, agentline.Job(agentline.DialCampaign{ProjectID: f.p1.ID, CampaignID: f.c.ID})) ||
			!slices.Equal(f.events(t, db), []string{agentline.EventCampaignStarted}) {
			t.Fatalf("start enqueued %v, emitted %v", *f.queued, f.events(t, db))
		}
		now := time.Now().UTC().Add(time.Second)
		claim := func(n int, at time.Time) agentline.DialClaimed {
			t.Helper()
			r, err := db.ClaimDial(ctx, agentline.DialClaim{ProjectID: f.p1.ID, CampaignID: f.c.ID, ContactID: f.contact(t, db, n).ID,
				Now: at, Interval: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		r := claim(0, now)
		if r.Result != agentline.Claimed || r.Dial.Attempt != 1 || r.Dial.Consent == nil || r.Dial.Consent.Source != "web form" {
			t.Fatalf("first claim %+v", r)
		}
		if got := f.contact(t, db, 0); got.Status != agentline.ContactCalling || got.Attempts != 1 || got.NextAttemptAt != nil {
			t.Fatalf("claimed contact %+v", got)
		}
		// The same contact again: gone (and its slot given back); another
		// at once: the slot is busy until now + 1/cps.
		if r := claim(0, now.Add(time.Second)); r.Result != agentline.ClaimContactGone {
			t.Fatalf("claiming a calling contact: %+v", r)
		}
		if r := claim(1, now.Add(100*time.Millisecond)); r.Result != agentline.ClaimSlotBusy ||
			!r.NextDialAt.Equal(now.Truncate(time.Microsecond).Add(500*time.Millisecond)) {
			t.Fatalf("second claim within the interval: %+v (now %v)", r, now)
		}
		r2 := claim(1, now.Add(2*time.Second))
		if r2.Result != agentline.Claimed {
			t.Fatalf("second claim %+v", r2)
		}
		// Two live dials: the campaign's limit (newCampaign's 2).
		if r := claim(2, now.Add(3*time.Second)); r.Result != agentline.ClaimFull {
			t.Fatalf("third claim with two live: %+v", r)
		}
		if _, _, err := db.AddDoNotCall(ctx, f.p2.ID, agentline.DoNotCall{PhoneNumber: "+14155550104"}); err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, `INSERT INTO do_not_call (project_id, phone_number, reason, created_at) VALUES (`+itoa(f.p1.ID)+`, '+14155550104', 'added behind the store''s back', '2024-06-03 10:00:00+00:00')`)
		if r := claim(3, now.Add(4*time.Second)); r.Result != agentline.ClaimDoNotCall || f.contact(t, db, 3).Status != agentline.ContactDoNotCall {
			t.Fatalf("claim of a listed number: %+v %+v", r, f.contact(t, db, 3))
		}
		if _, _, err := db.TransitionCampaign(ctx, f.p1.ID, f.c.ID, []string{agentline.CampaignRunning}, agentline.CampaignPaused); err != nil {
			t.Fatal(err)
		}
		if r := claim(2, now.Add(5*time.Second)); r.Result != agentline.ClaimNotRunning {
			t.Fatalf("claim in a paused campaign: %+v", r)
		}
		// A claim given back leaves the contact as it was.
		if ok, err := db.UnclaimDial(ctx, f.p1.ID, r2.Dial.ID); err != nil || !ok {
			t.Fatalf("unclaim %v %v", ok, err)
		}
		if got := f.contact(t, db, 1); got.Status != agentline.ContactPending || got.Attempts != 0 || got.NextAttemptAt == nil || len(got.Dials) != 0 {
			t.Fatalf("given back %+v", got)
		}
	})
}

// A campaign call's reservation links it to its dial; its end settles the
// dial in the same transaction (through package conversation): a person
// completes the contact, a busy line is retried until the attempts run
// out, a message left on a machine is final, and the last contact's end
// completes the campaign, with the events of each.
func TestSettleCampaignCalls(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newEngineFixture(t, db, "+14155550101", "+14155550102", "+14155550107")
		n, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: f.p1.ID, PhoneNumber: "+14155550100", AgentID: &f.a1.ID,
			Status: agentline.NumberActive, CarrierSID: "PN1"})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Now().UTC().Add(time.Second)
		// dial claims contact i and reserves its call, answered with sid.
		dial := func(i int, sid string) (agentline.CampaignDial, agentline.Call) {
			t.Helper()
			at = at.Add(time.Second)
			ct := f.contact(t, db, i)
			r, err := db.ClaimDial(ctx, agentline.DialClaim{ProjectID: f.p1.ID, CampaignID: f.c.ID, ContactID: ct.ID, Now: at, Interval: time.Millisecond})
			if err != nil || r.Result != agentline.Claimed {
				t.Fatalf("claim %+v %v", r, err)
			}
			call, err := db.ReserveDialCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, NumberID: &n.ID,
				CallSID: agentline.PendingCallSID("ref" + sid), Direction: agentline.CallOutbound, From: n.PhoneNumber, To: ct.PhoneNumber,
				Status: agentline.CallQueued, StreamRef: "ref" + sid}, 10, r.Dial.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.ReserveDialCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: "pending:again" + sid,
				Direction: agentline.CallOutbound, Status: agentline.CallQueued}, 10, r.Dial.ID, 0); agentline.ErrorCode(err) != agentline.EConflict {
				t.Fatalf("a second call of one dial: %v", err)
			}
			if call, err = db.AttachCallSID(ctx, f.p1.ID, call.ID, sid, agentline.CallQueued); err != nil {
				t.Fatal(err)
			}
			return r.Dial, call
		}
		end := func(sid, status, answeredBy string) {
			t.Helper()
			if answeredBy != "" {
				if _, _, err := db.RecordAnsweredBy(ctx, f.p1.ID, sid, answeredBy); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: status}, conversation.CallChanged); err != nil {
				t.Fatal(err)
			}
		}
		d0, call0 := dial(0, "CA0")
		var linked struct {
			campaign, contact int64
			vars              string
		}
		if err := db.ReadAdmin(ctx, `SELECT campaign_id, contact_id, variables FROM calls WHERE id = `+itoa(call0.ID),
			&linked.campaign, &linked.contact, &linked.vars); err != nil || linked.campaign != f.c.ID ||
			linked.contact != d0.ContactID || linked.vars != `{"first_name":"N0"}` {
			t.Fatalf("the call's link %+v %v", linked, err)
		}
		if ct := f.contact(t, db, 0); ct.LastCallID == nil || *ct.LastCallID != call0.ID || *ct.Dials[0].CallID != call0.ID {
			t.Fatalf("contact after the reservation %+v", ct)
		}
		end("CA0", agentline.CallCompleted, agentline.AnsweredByHuman)
		end("CA0", agentline.CallCompleted, "") // told twice, settled once
		if ct := f.contact(t, db, 0); ct.Status != agentline.ContactCompleted || ct.LastOutcome.Outcome != agentline.ContactCompleted {
			t.Fatalf("a person answered: %+v %+v", ct, ct.LastOutcome)
		}

		// Busy three times (newCampaign's max_attempts): retried after
		// retry_after each time, then busy for good.
		for i := range 3 {
			sid := "CA1" + itoa(int64(i))
			dial(1, sid)
			end(sid, agentline.CallBusy, "")
			ct := f.contact(t, db, 1)
			if i < 2 && (ct.Status != agentline.ContactPending || ct.NextAttemptAt == nil || time.Until(*ct.NextAttemptAt) < 80*time.Second) {
				t.Fatalf("busy attempt %d: %+v", i+1, ct)
			}
			if i == 2 && (ct.Status != agentline.ContactBusy || ct.NextAttemptAt != nil || ct.Attempts != 3) {
				t.Fatalf("busy for good: %+v", ct)
			}
			mustExec(t, db, `UPDATE campaign_contacts SET next_attempt_at = '2024-01-01 00:00:00+00:00' WHERE status = 'pending'`)
		}

		// A machine, a message left before its call ends: final, no retry.
		d2, _ := dial(2, "CA2")
		if ok, err := db.MarkMessageLeft(ctx, f.p1.ID, d2.ID); err != nil || !ok {
			t.Fatalf("mark %v %v", ok, err)
		}
		end("CA2", agentline.CallCompleted, agentline.AnsweredByMachineEndBeep)
		if ct := f.contact(t, db, 2); ct.Status != agentline.ContactVoicemail || ct.Attempts != 1 {
			t.Fatalf("message left: %+v", ct)
		}
		got, _ := db.Campaign(ctx, f.p1.ID, f.c.ID)
		if got.Status != agentline.CampaignCompleted || got.FinishedAt == nil || got.Counts.Completed != 1 || got.Counts.Busy != 1 || got.Counts.Voicemail != 1 {
			t.Fatalf("campaign after its last contact: %+v", got)
		}
		var contactEvents, completed int
		for _, e := range f.events(t, db) {
			switch e {
			case agentline.EventCampaignContactCompleted:
				contactEvents++
			case agentline.EventCampaignCompleted:
				completed++
			}
		}
		if contactEvents != 3 || completed != 1 {
			t.Fatalf("events %v", f.events(t, db))
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The carrier's answer to a call's request may come after its stream was
// admitted, or after the campaign engine's recovery gave the call up:
// attaching its SID never moves the call back, and a call that has ended
// is not found (its caller hangs the carrier's call up).
func TestAttachCallSIDKeepsTheCallForward(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		reserve := func(ref string) agentline.Call {
			t.Helper()
			c, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: agentline.PendingCallSID(ref),
				Direction: agentline.CallOutbound, From: "+14155550100", To: "+14155550101", Status: agentline.CallQueued, StreamRef: ref}, 10)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		admitted := reserve("a")
		if _, err := db.AttachCallSID(ctx, f.p1.ID, admitted.ID, "CA1", agentline.CallQueued); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallInProgress}, nil); err != nil {
			t.Fatal(err)
		}
		if c, err := db.AttachCallSID(ctx, f.p1.ID, admitted.ID, "CA1", agentline.CallQueued); err != nil || c.Status != agentline.CallInProgress {
			t.Fatalf("the request's answer after the stream: %+v %v", c, err)
		}
		given := reserve("b")
		if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: given.CallSID, Status: agentline.CallFailed}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AttachCallSID(ctx, f.p1.ID, given.ID, "CA2", agentline.CallQueued); agentline.ErrorCode(err) != agentline.ENotFound {
			t.Fatalf("the answer for a call given up: %v", err)
		}
	})
}

// A campaign call's reservation takes the campaign's send slot as its last
// write, waiting for it: two calls of one campaign are reserved, and so
// sent to the carrier, at least the interval apart, however close their
// claims; a campaign that stopped running has its calls' reservations
// refused, with nothing reserved. Without an interval nothing is paced.
func TestReserveDialCallTakesTheSendSlot(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newEngineFixture(t, db, "+14155550101", "+14155550102", "+14155550103")
		mustExec(t, db, `UPDATE campaigns SET max_concurrent_calls = 10, calls_per_second = 10`)
		var dials []agentline.CampaignDial
		for n := range 3 {
			r, err := db.ClaimDial(ctx, agentline.DialClaim{ProjectID: f.p1.ID, CampaignID: f.c.ID, ContactID: f.contact(t, db, n).ID,
				Now: time.Now().Add(time.Duration(n) * time.Hour), Interval: time.Millisecond})
			if err != nil || r.Result != agentline.Claimed {
				t.Fatalf("claim %d: %+v %v", n, r, err)
			}
			dials = append(dials, r.Dial)
		}
		reserve := func(n int, interval time.Duration) (agentline.Call, error) {
			sid := "ref" + itoa(int64(n))
			return db.ReserveDialCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: agentline.PendingCallSID(sid),
				Direction: agentline.CallOutbound, To: "+1415555010" + itoa(int64(n+1)), Status: agentline.CallQueued, StreamRef: sid},
				10, dials[n].ID, interval)
		}
		const interval = 300 * time.Millisecond
		first := time.Now()
		if _, err := reserve(0, interval); err != nil {
			t.Fatal(err)
		}
		if _, err := reserve(1, interval); err != nil {
			t.Fatal(err)
		}
		if gap := time.Since(first); gap < interval {
			t.Fatalf("the second call of the campaign was reserved %v after the first, within its interval %v", gap, interval)
		}
		if _, _, err := db.TransitionCampaign(ctx, f.p1.ID, f.c.ID, []string{agentline.CampaignRunning}, agentline.CampaignPaused); err != nil {
			t.Fatal(err)
		}
		if _, err := reserve(2, interval); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("a paused campaign's call: %v", err)
		}
		if got := f.contact(t, db, 2); len(got.Dials) != 1 || got.Dials[0].CallID != nil {
			t.Fatalf("the refused reservation left %+v", got.Dials)
		}
		if _, err := reserve(2, 0); err != nil { // unpaced (a test's own dial): taken as it comes
			t.Fatal(err)
		}
	})
}

// The campaign sweep has work while a campaign runs, and while a contact
// of any campaign is still calling (a paused campaign's dial in flight);
// otherwise none.
func TestCampaignsToSweep(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		want := func(w bool, when string) {
			t.Helper()
			if got, err := db.CampaignsToSweep(ctx); err != nil || got != w {
				t.Fatalf("%s: to sweep %v, %v; want %v", when, got, err, w)
			}
		}
		want(false, "no campaign")
		f := newEngineFixture(t, db, "+14155550101")
		want(true, "running")
		r, err := db.ClaimDial(ctx, agentline.DialClaim{ProjectID: f.p1.ID, CampaignID: f.c.ID, ContactID: f.contact(t, db, 0).ID,
			Now: time.Now().UTC().Add(time.Second), Interval: time.Second})
		if err != nil || r.Result != agentline.Claimed {
			t.Fatalf("claim %+v %v", r, err)
		}
		if _, _, err := db.TransitionCampaign(ctx, f.p1.ID, f.c.ID, []string{agentline.CampaignRunning}, agentline.CampaignPaused); err != nil {
			t.Fatal(err)
		}
		want(true, "paused with a contact calling")
		if ok, err := db.UnclaimDial(ctx, f.p1.ID, r.Dial.ID); err != nil || !ok {
			t.Fatalf("unclaim %v %v", ok, err)
		}
		want(false, "paused with nobody calling")
	})
}
