package telephony

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// ReconcileStore is what reconciliation needs from storage: claim the
// calls nobody has reported on for a while, and apply what the carrier
// says through the same path as its status callbacks (so the call's
// call.status_changed and conversation.ended events are emitted).
type ReconcileStore interface {
	ClaimStaleCalls(ctx context.Context, before, now time.Time, limit int) ([]string, error)
	ApplyCallEvent(ctx context.Context, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error)
}

// CallFetcher is what reconciliation asks the carrier.
type CallFetcher interface {
	FetchCall(ctx context.Context, callSID string) (carrier.CallState, error)
}

// Reconciler is the worker of ReconcileCalls jobs. A call our records show
// live may have ended without our hearing of it: its instance died with
// the relay (the carrier then ends the call when the media stream drops),
// or a status callback was lost. Reconciliation asks the carrier about
// each call not heard of for After and applies only a final status: a call
// the carrier says is still live may be relayed right now by another
// instance, and is left to it. Each call is asked about at most once per
// After, by one instance (ClaimStaleCalls).
type Reconciler struct {
	river.WorkerDefaults[agentline.ReconcileCalls]
	Store ReconcileStore
	// Carrier is nil without a carrier account: there is nobody to ask.
	Carrier CallFetcher
	After   time.Duration
	Logger  *slog.Logger
	Now     func() time.Time
}

// reconcileBatch bounds the calls one run asks about; the next run takes
// the rest.
const reconcileBatch = 200

// Interval is how often the recurring run comes: half of After, between
// 1 s and a minute.
func (r *Reconciler) Interval() time.Duration {
	return min(max(r.After/2, time.Second), time.Minute)
}

// Work runs one reconciliation.
//
// The run an instance enqueues at its start (All) asks about the calls
// not heard of since it was enqueued, not since it runs: under load it may
// run seconds later, and a call admitted meanwhile is live and heard of
// (the sandbox's carrier, which never placed the calls of `agentline call`,
// would say it is gone and end it).
func (r *Reconciler) Work(ctx context.Context, job *river.Job[agentline.ReconcileCalls]) error {
	var heardBefore time.Time
	if job.Args.All {
		heardBefore = job.CreatedAt
	}
	_, err := r.Reconcile(ctx, heardBefore)
	return err
}

// Reconcile asks the carrier about the live calls not heard of since
// heardBefore (when zero, for After) and ends those it says have ended. It
// returns how many it ended.
func (r *Reconciler) Reconcile(ctx context.Context, heardBefore time.Time) (int, error) {
	if r.Carrier == nil {
		return 0, nil
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	t := now().UTC()
	before := t.Add(-r.After)
	if !heardBefore.IsZero() {
		before = heardBefore.UTC()
	}
	sids, err := r.Store.ClaimStaleCalls(ctx, before, t, reconcileBatch)
	if err != nil {
		return 0, fmt.Errorf("reconcile calls: %w", err)
	}
	ended := 0
	for _, sid := range sids {
		if ctx.Err() != nil {
			break // the job's time is up: the rest are asked after After
		}
		ok, err := r.reconcileOne(ctx, sid)
		if err != nil {
			// Asked again after After; the others go on.
			r.Logger.Warn("reconcile call: could not ask the carrier", "call_sid", sid, "err", err)
			continue
		}
		if ok {
			ended++
		}
	}
	if ended > 0 {
		r.Logger.Info("reconciled calls with the carrier", "asked", len(sids), "ended", ended)
	}
	return ended, ctx.Err()
}

// reconcileOne asks the carrier about one call and applies its status if
// it is final.
func (r *Reconciler) reconcileOne(ctx context.Context, sid string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	st, err := r.Carrier.FetchCall(ctx, sid)
	e := agentline.CallEvent{CallSID: sid, Status: st.Status, DurationS: st.DurationS, At: st.EndedAt, EndReason: agentline.EndReasonReconciled}
	switch {
	case errors.Is(err, carrier.ErrCallGone):
		e = goneAtCarrier(sid)
	case err != nil:
		return false, err
	case !agentline.CallStatusFinal(st.Status):
		return false, nil
	}
	call, err := r.Store.ApplyCallEvent(ctx, e, conversation.CallChanged)
	if err != nil {
		return false, fmt.Errorf("apply the carrier's status: %w", err)
	}
	r.Logger.Info("reconciled a call with the carrier", "call_sid", sid, "project_id", call.ProjectID, "status", call.Status, "end_reason", call.EndReason)
	return true, nil
}
