package campaign

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
)

// SweepInterval is how often the SweepCampaigns job runs.
const SweepInterval = 2 * time.Second

// stallAfter is how long a running campaign with contacts due and room for
// a dial may go without one before the sweep dials it itself: its
// DialCampaign job may be held by an instance that died (the job queue
// rescues it only after AGENTLINE_JOB_RESCUE_AFTER), or its contacts just
// became due (a retry, an opening window) with no wake.
const stallAfter = 3 * SweepInterval

// sweepBudget bounds the dialing the sweep does itself for a stalled
// campaign, so that one sweep ends before the next.
const sweepBudget = SweepInterval / 2

// Sweeper is the worker of the SweepCampaigns job (every SweepInterval
// while Due, once per deployment): nothing in the engine waits on a single
// wake.
type Sweeper struct {
	river.WorkerDefaults[agentline.SweepCampaigns]
	e *Engine
}

// Sweeper returns the worker of SweepCampaigns jobs.
func (e *Engine) Sweeper() *Sweeper { return &Sweeper{e: e} }

// Due reports whether a sweep has anything to do: a campaign is running,
// or a contact is still calling on a dial that recovery may have to
// settle. A deployment with no campaign under way then inserts no job
// every SweepInterval.
func (s *Sweeper) Due(ctx context.Context) (bool, error) { return s.e.store.CampaignsToSweep(ctx) }

// Work recovers the dials instances left unfinished, then, for each
// running campaign: completes it when nobody is left to call; wakes its
// dialing when contacts are due and it has room; and dials it here for a
// moment when it has gone stallAfter without a dial.
func (s *Sweeper) Work(ctx context.Context, j *river.Job[agentline.SweepCampaigns]) error {
	e := s.e
	if err := e.Recover(ctx); err != nil {
		e.log.Warn("campaign engine: recovery failed; the next sweep tries again", "err", err)
	}
	list, err := e.store.RunningCampaigns(ctx)
	if err != nil {
		return fmt.Errorf("sweep campaigns: %w", err)
	}
	for _, c := range list {
		now := e.now()
		woken, err := e.store.FinishDialPass(ctx, c.ProjectID, c.ID, now, true, nil)
		if err != nil {
			e.log.Warn("campaign engine: could not sweep a campaign", "campaign_id", c.ID, "err", err)
			continue
		}
		if woken && c.NextDialAt.Before(now.Add(-stallAfter)) {
			if err := e.Pass(ctx, c.ProjectID, c.ID, sweepBudget, nil); err != nil {
				e.log.Warn("campaign engine: could not dial a stalled campaign", "campaign_id", c.ID, "err", err)
			}
		}
	}
	return nil
}

// recoverBatch bounds the dials one sweep recovers; the next takes the
// rest.
const recoverBatch = 100

// Recover settles the dials whose call never reached the carrier's books
// and that are older than RecoverAfter (an instance died, or the carrier
// did not answer, between the claim and the carrier's answer; see the
// store's StaleDials). Such a dial is never dialed again blindly:
//
//   - a dial with no call record was never sent to the carrier (the
//     record is reserved, linked to the dial, before the carrier is
//     asked): it failed, and the retry rule decides;
//   - a dial whose record still has a placeholder SID is looked for at
//     the carrier among the calls from its number to the contact since
//     its reservation. Found, the record gets the carrier's SID, machine
//     detection's verdict and the carrier's status (a final one ends it, and the call's end settles
//     the dial, as every call's end does; a live one is then followed by
//     its status callbacks and reconciliation). Not found, the carrier
//     never got it: the call fails, which settles the dial failed.
func (e *Engine) Recover(ctx context.Context) error {
	stale, err := e.store.StaleDials(ctx, e.now().Add(-e.recoverAfter), recoverBatch)
	if err != nil {
		return err
	}
	for _, s := range stale {
		log := e.log.With("project_id", s.ProjectID, "campaign_id", s.Dial.CampaignID, "contact_id", s.Dial.ContactID,
			"dial_id", s.Dial.ID, "attempt", s.Dial.Attempt)
		if s.Dial.CallID == nil {
			if ok, err := e.store.SettleDial(ctx, s.ProjectID, s.Dial.ID, e.failed); err != nil {
				log.Warn("campaign engine: could not settle a dial that placed no call", "err", err)
			} else if ok {
				log.Info("campaign engine: a dial placed no call before its instance stopped; it failed")
			}
			continue
		}
		if e.carrier == nil {
			continue
		}
		if err := e.recoverCall(ctx, s); err != nil {
			log.Warn("campaign engine: could not reconcile a dial with the carrier; the next sweep tries again", "err", err)
		}
	}
	return nil
}

// clockSkew is how much earlier than our reservation the carrier's clock
// may date the call it made of it.
const clockSkew = time.Minute

// recoverCall settles a stale dial whose call record has a placeholder
// SID with what the carrier says (see Recover).
func (e *Engine) recoverCall(ctx context.Context, s agentline.StaleDial) error {
	found, err := e.carrier.FindCalls(ctx, s.From, s.To, s.ReservedAt.Add(-clockSkew))
	if err != nil {
		return err
	}
	log := e.log.With("project_id", s.ProjectID, "dial_id", s.Dial.ID, "call_id", *s.Dial.CallID)
	for _, f := range found {
		if _, err := e.store.ProjectOfCall(ctx, f.SID); err == nil {
			continue // another call of ours (an earlier attempt)
		} else if !errors.Is(err, agentline.ErrNotFound) {
			return err
		}
		if _, err := e.store.AttachCallSID(ctx, s.ProjectID, *s.Dial.CallID, f.SID, agentline.CallQueued); err != nil {
			return err
		}
		log.Info("campaign engine: found a dial's call at the carrier", "call_sid", f.SID, "status", f.Status, "answered_by", f.AnsweredBy)
		if agentline.ValidAnsweredBy(f.AnsweredBy) {
			// Its verdict's callback came while we did not know the call.
			if _, _, err := e.store.RecordAnsweredBy(ctx, s.ProjectID, f.SID, f.AnsweredBy); err != nil {
				return err
			}
		}
		ev := agentline.CallEvent{CallSID: f.SID, Status: f.Status, DurationS: f.DurationS, At: f.EndedAt,
			EndReason: agentline.EndReasonReconciled}
		if !agentline.ValidCallStatus(f.Status) || f.Status == agentline.CallQueued {
			return nil
		}
		_, err := e.store.ApplyCallEvent(ctx, ev, conversation.CallChanged)
		return err
	}
	log.Info("campaign engine: the carrier never got a dial's call; it failed")
	_, err = e.store.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: s.CallSID, Status: agentline.CallFailed,
		EndReason: EndReasonNotPlaced}, conversation.CallChanged)
	return err
}

// EndReasonNotPlaced is the end reason of a campaign call the carrier never
// got: its instance stopped, or the carrier did not answer, before it was
// placed.
const EndReasonNotPlaced = "not_placed"
