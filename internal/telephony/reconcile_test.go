package telephony_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/telephony"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// The reconciler asks the carrier only about calls not heard of for After,
// each at most once per After; a carrier error leaves the call as it is
// until its next turn, when a final status there ends it. Without a
// carrier it does nothing.
func TestReconcilerAsksOncePerPeriod(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	n := e.provision("+14155550100", e.ada)
	sid := endedAtCarrier(t, e, n)
	t0 := time.Now()
	clock := t0
	r := fakeReconciler(t, e, time.Minute)
	r.Now = func() time.Time { return clock }
	asked := func() int { return askedAbout(e, sid) }
	step := func(at time.Duration, wantEnded, wantAsked int) {
		t.Helper()
		clock = t0.Add(at)
		ended, err := r.Reconcile(ctx, time.Time{})
		if err != nil || ended != wantEnded || asked() != wantAsked {
			t.Fatalf("at +%v: ended %d (%v), asked %d times; want %d ended, asked %d times", at, ended, err, asked(), wantEnded, wantAsked)
		}
	}
	step(0, 0, 0) // heard of just now
	e.fake.FailNext(503, 20503, "Service Unavailable")
	step(2*time.Minute, 0, 1) // stale: asked, the carrier fails
	if c, _ := e.app.Store.Call(ctx, e.project, sid); c.Status != agentline.CallInProgress {
		t.Fatalf("a carrier error changed the call: %+v", c)
	}
	step(2*time.Minute+30*time.Second, 0, 1) // asked 30 s ago: not yet
	step(3*time.Minute+time.Second, 1, 2)    // its turn again: ended
	c, err := e.app.Store.Call(ctx, e.project, sid)
	if err != nil || c.Status != agentline.CallCompleted || c.EndReason != agentline.EndReasonReconciled || c.DurationS == nil {
		t.Fatalf("reconciled call = %+v %v", c, err)
	}
	step(time.Hour, 0, 2) // a final call is never asked about again

	none := &telephony.Reconciler{Store: e.app.Store, After: time.Minute, Logger: r.Logger}
	if ended, err := none.Reconcile(ctx, time.Now()); ended != 0 || err != nil {
		t.Fatalf("without a carrier: %d %v", ended, err)
	}
}

// The run an instance enqueues at its start (All) asks about the calls not
// heard of since the job was enqueued, and leaves alone a call admitted
// after that, even when the job runs later: the sandbox's carrier says the
// calls of `agentline call` are gone, and would end a live one.
func TestReconcilerStartRunLeavesNewerCalls(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	n := e.provision("+14155550100", e.ada)
	older := endedAtCarrier(t, e, n)
	time.Sleep(2 * time.Millisecond)
	enqueued := time.Now()
	time.Sleep(2 * time.Millisecond)
	newer := endedAtCarrier(t, e, n)
	r := fakeReconciler(t, e, time.Hour)
	job := &river.Job[agentline.ReconcileCalls]{JobRow: &rivertype.JobRow{CreatedAt: enqueued}, Args: agentline.ReconcileCalls{All: true}}
	if err := r.Work(ctx, job); err != nil {
		t.Fatal(err)
	}
	for sid, want := range map[string]string{older: agentline.CallCompleted, newer: agentline.CallInProgress} {
		if c, err := e.app.Store.Call(ctx, e.project, sid); err != nil || c.Status != want {
			t.Errorf("call %s after the start run: %q (%v), want %q", sid, c.Status, err, want)
		}
	}
	if k := askedAbout(e, newer); k != 0 {
		t.Errorf("the carrier was asked %d times about the call admitted after the job", k)
	}
}

// endedAtCarrier is an inbound call to n that our records show in progress
// and the carrier says has completed.
func endedAtCarrier(t *testing.T, e *env, n agentline.PhoneNumber) string {
	t.Helper()
	sid := e.fake.IncomingCall("+14155550199", n.PhoneNumber)
	if _, err := e.app.Store.ApplyCallEvent(context.Background(), agentline.CallEvent{CallSID: sid, Status: agentline.CallInProgress,
		Direction: agentline.CallInbound, From: "+14155550199", To: n.PhoneNumber}, conversation.CallChanged); err != nil {
		t.Fatal(err)
	}
	e.fake.SetCallStatus(sid, agentline.CallCompleted)
	return sid
}

// fakeReconciler reconciles e's calls with e's carrier fake.
func fakeReconciler(t *testing.T, e *env, after time.Duration) *telephony.Reconciler {
	t.Helper()
	tw, err := carrier.NewTwilio(carrier.TwilioConfig{AccountSID: e.fake.AccountSID(), AuthToken: e.fake.AuthToken(), BaseURL: e.fake.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return &telephony.Reconciler{Store: e.app.Store, Carrier: tw, After: after, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// askedAbout counts the carrier fake's requests for the call sid.
func askedAbout(e *env, sid string) int {
	k := 0
	for _, req := range e.fake.Requests() {
		if strings.HasPrefix(req, "GET ") && strings.Contains(req, "/Calls/"+sid) {
			k++
		}
	}
	return k
}
