package cluster_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// dialSID places an inbound call with the carrier's call SID sid through
// instance i and waits for the model's socket.
func dialSID(t *testing.T, ctx context.Context, i *instance, f fakes, fx fixture, sid string) *liveCall {
	t.Helper()
	c, err := callsim.Inbound(ctx, i.Client, i.URL, "+14155550199", fx.number, signed(callsim.Options{EchoMarks: true, CallSID: sid}))
	if err != nil {
		t.Fatalf("call through %s: %v", i.name, err)
	}
	t.Cleanup(func() { c.Close() })
	ss, err := f.model.Next(ctx)
	if err != nil {
		t.Fatalf("the model's socket did not open: %v", err)
	}
	return &liveCall{Call: c, model: ss}
}

// Two instances on PostgreSQL with a carrier account (twiliofake) and
// reconciliation every second: b relays a call and is killed (SIGKILL);
// the carrier ends that call when its stream drops, and it is reconciled
// (completed, reason "reconciled"), by b's next start or by the recurring
// run, whichever comes first. Meanwhile a call relayed
// by a, asked about again and again, is never touched: the carrier says it
// is in progress, audio keeps flowing, and when it ends its record carries
// the relay's own end reason.
func TestReconcileLeavesCallsOfLiveInstances(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t, store.Postgres)
	f := startFakes(t)
	carrier := twiliofake.New(twiliofake.Options{AuthToken: carrierToken})
	t.Cleanup(carrier.Close)
	env := f.env(dbURL, "")
	env["TWILIO_ACCOUNT_SID"], env["TWILIO_API_BASE_URL"] = carrier.AccountSID(), carrier.URL()
	env["AGENTLINE_CALL_RECONCILE_AFTER"] = "1s"
	a, b := start(t, "a", env), start(t, "b", env)
	fx := setup(t, a, dbURL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := openDB(t, ctx, dbURL)
	call := func(sid string) agentline.Call {
		t.Helper()
		c, err := db.Call(ctx, fx.project.ID, sid)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	asked := func(sid string) int {
		n := 0
		for _, r := range carrier.Requests() {
			if strings.HasPrefix(r, "GET ") && strings.Contains(r, "/Calls/"+sid) {
				n++
			}
		}
		return n
	}

	onA := dialSID(t, ctx, a, f, fx, carrier.IncomingCall("+14155550199", fx.number))
	onA.exchange(t, ctx)
	onB := dialSID(t, ctx, b, f, fx, carrier.IncomingCall("+14155550198", fx.number))
	onB.exchange(t, ctx)
	b.signal(t, syscall.SIGKILL)
	b.wait(t, 10*time.Second)
	carrier.SetCallStatus(onB.CallSID, agentline.CallCompleted) // the stream dropped: the carrier hangs up
	b.run(t)
	waitFor(t, 30*time.Second, "b's call reconciled", func() bool { return agentline.CallStatusFinal(call(onB.CallSID).Status) })
	if c := call(onB.CallSID); c.Status != agentline.CallCompleted || c.EndReason != agentline.EndReasonReconciled || c.DurationS == nil {
		t.Errorf("b's call after reconciliation: %+v", c)
	}

	// a's call is asked about again and again, and left alone.
	before := asked(onA.CallSID)
	waitFor(t, 30*time.Second, "a's call asked about twice more", func() bool { return asked(onA.CallSID) >= before+2 })
	onA.exchange(t, ctx)
	if c := call(onA.CallSID); c.Status != agentline.CallInProgress || c.EndedAt != nil || c.EndReason != "" {
		t.Fatalf("a's live call was touched: %+v", c)
	}
	if err := onA.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a's call's end recorded", func() bool { return call(onA.CallSID).Status == agentline.CallCompleted })
	if c := call(onA.CallSID); c.EndReason == agentline.EndReasonReconciled || c.EndReason == "" {
		t.Errorf("a's call ended with reason %q, want the relay's", c.EndReason)
	}
	t.Logf("a's call asked about %d times while live, ended %q; b's call reconciled", asked(onA.CallSID), call(onA.CallSID).EndReason)
}
