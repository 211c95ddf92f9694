package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A request the carrier holds creates its call whenever the carrier gets to
// it, amid the campaign's later requests; the campaign's own spacing of
// send slots cannot keep that second within calls_per_second. So a request
// counts against the next ones while it has no answer, and for one second
// after its answer: at 2 calls a second, with one request held, the next
// goes at once, the one after waits until a second after that one's
// answer; at 1 a second a held request leaves no room (the dial is
// unavailable, nothing reserved) until it is answered late (recovery found
// its call at the carrier), and the next waits a second past that answer;
// a request the carrier refused is answered too.
func TestSendSlotsCountUnansweredRequests(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		numbers := []string{"+14155550101", "+14155550102", "+14155550103", "+14155550104", "+14155550105"}
		f := newEngineFixture(t, db, numbers...)
		mustExec(t, db, `UPDATE campaigns SET max_concurrent_calls = 10, calls_per_second = 2`)
		var dials []agentline.CampaignDial
		for n := range numbers {
			r, err := db.ClaimDial(ctx, agentline.DialClaim{ProjectID: f.p1.ID, CampaignID: f.c.ID, ContactID: f.contact(t, db, n).ID,
				Now: time.Now().Add(time.Duration(n) * time.Hour), Interval: time.Millisecond})
			if err != nil || r.Result != agentline.Claimed {
				t.Fatalf("claim %d: %+v %v", n, r, err)
			}
			dials = append(dials, r.Dial)
		}
		const interval = time.Millisecond // the spacing alone would let every request go at once
		reserve := func(n int) (agentline.Call, error) {
			sid := "ref" + itoa(int64(n))
			return db.ReserveDialCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: agentline.PendingCallSID(sid),
				Direction: agentline.CallOutbound, To: numbers[n], Status: agentline.CallQueued, StreamRef: sid},
				10, dials[n].ID, interval)
		}
		answer := func(call agentline.Call) time.Time {
			t.Helper()
			before := time.Now()
			if _, err := db.AttachCallSID(ctx, f.p1.ID, call.ID, "CA"+itoa(call.ID), agentline.CallQueued); err != nil {
				t.Fatal(err)
			}
			return before
		}
		held, err := reserve(0) // the carrier holds it: no answer
		if err != nil {
			t.Fatal(err)
		}
		second, err := reserve(1)
		if err != nil {
			t.Fatal(err)
		}
		answered := answer(second)
		third, err := reserve(2)
		if err != nil {
			t.Fatal(err)
		}
		if gap := time.Since(answered); gap < time.Second {
			t.Fatalf("with a request held, a third went %v after the second's answer: 3 calls could be created within one second", gap)
		}
		answer(third)

		mustExec(t, db, `UPDATE campaigns SET calls_per_second = 1`)
		if _, err := reserve(3); agentline.ErrorCode(err) != agentline.EUnavailable {
			t.Fatalf("at 1 a second with a request held: %v", err)
		}
		if got := f.contact(t, db, 3); len(got.Dials) != 1 || got.Dials[0].CallID != nil {
			t.Fatalf("the refused reservation left %+v", got.Dials)
		}
		answered = answer(held)
		refused, err := reserve(3)
		if err != nil {
			t.Fatal(err)
		}
		if gap := time.Since(answered); gap < time.Second {
			t.Fatalf("a request went %v after a held one's late answer, at 1 a second", gap)
		}
		answered = time.Now()
		if err := db.DeleteCall(ctx, f.p1.ID, refused.ID); err != nil { // the carrier refused it: an answer too
			t.Fatal(err)
		}
		if _, err := reserve(4); err != nil {
			t.Fatalf("after a refused request, at 1 a second: %v", err)
		}
		if gap := time.Since(answered); gap < time.Second {
			t.Fatalf("a request went %v after a refused one, at 1 a second", gap)
		}
	})
}
