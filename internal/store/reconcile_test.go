package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// ClaimStaleCalls hands out the live calls not heard of since the cutoff,
// each once per cutoff even to claims running at once, and never a final
// call or a reserved one the carrier has not placed; a reconciled end
// reason gives way to the relay's own when it reports later.
func TestClaimStaleCalls(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		reserve := func(sid, status string) {
			t.Helper()
			c, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: sid, Direction: agentline.CallOutbound,
				From: "+14155550100", To: "+14155550199", Status: status}, 100)
			if err != nil || c.CallSID != sid {
				t.Fatalf("reserve %s: %+v %v", sid, c, err)
			}
		}
		for _, sid := range []string{"CA1", "CA2", "CA3"} {
			reserve(sid, agentline.CallInProgress)
		}
		reserve("CA4", agentline.CallCompleted)
		reserve(agentline.PendingCallSID("ref1"), agentline.CallQueued)

		now := time.Now().UTC().Add(time.Minute) // every record is older than now
		var mu sync.Mutex
		var got []string
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				sids, err := db.ClaimStaleCalls(ctx, now, now, 10)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				got = append(got, sids...)
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.Sort(got)
		if !slices.Equal(got, []string{"CA1", "CA2", "CA3"}) {
			t.Fatalf("claimed %v, want CA1 CA2 CA3 once each", got)
		}
		if again, err := db.ClaimStaleCalls(ctx, now.Add(-time.Second), now, 10); err != nil || len(again) != 0 {
			t.Fatalf("claimed again before the cutoff passed: %v %v", again, err)
		}
		if later, err := db.ClaimStaleCalls(ctx, now.Add(time.Second), now.Add(time.Second), 2); err != nil || len(later) != 2 {
			t.Fatalf("after the cutoff (limit 2): %v %v", later, err)
		}

		if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted, EndReason: agentline.EndReasonReconciled}, callChanged); err != nil {
			t.Fatal(err)
		}
		c, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted, EndReason: "caller_hangup"}, callChanged)
		if err != nil || c.EndReason != "caller_hangup" {
			t.Fatalf("the relay's reason after reconciliation: %+v %v", c, err)
		}
		c, err = db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted, EndReason: agentline.EndReasonReconciled}, callChanged)
		if err != nil || c.EndReason != "caller_hangup" {
			t.Fatalf("a reconciliation after the relay's reason: %+v %v", c, err)
		}
	})
}
