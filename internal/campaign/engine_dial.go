package campaign

import (
	"context"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// uncallableWait is how long a contact the window can never reach (or
// whose zones cannot be known) waits before it is looked at again: a
// change of the window makes it due at once anyway.
const uncallableWait = 24 * time.Hour

// sortByWindow splits due contacts into those whose window is open now in
// every one of their zones (Zones, OpenIn) and those to move to when it
// next opens (NextOpen).
func (e *Engine) sortByWindow(c agentline.Campaign, due []agentline.CampaignContact, now time.Time) ([]agentline.CampaignContact, map[int64]time.Time) {
	w := Window(c.CallingWindow)
	var open []agentline.CampaignContact
	later := map[int64]time.Time{}
	for _, ct := range due {
		zones, err := Zones(ct.PhoneNumber, ct.Timezone)
		if err != nil {
			e.log.Warn("campaign engine: no time zone for a contact; it waits", "campaign_id", c.ID, "contact_id", ct.ID, "err", err)
			later[ct.ID] = now.Add(uncallableWait)
			continue
		}
		if OpenIn(w, now, zones) {
			open = append(open, ct)
			continue
		}
		next, ok := NextOpen(w, now, zones)
		if !ok {
			e.log.Warn("campaign engine: the window never opens in every zone of a contact; it waits",
				"campaign_id", c.ID, "contact_id", ct.ID)
			next = now.Add(uncallableWait)
		}
		later[ct.ID] = next
	}
	return open, later
}

// paceMargin stretches the time between two dials beyond
// 1 / calls_per_second. The rate at the carrier is guaranteed by the
// send slot (store.ReserveDialCall), which also counts the campaign's
// requests still unanswered or answered within the last second, since
// the carrier creates a call when it gets to the request; the margin
// keeps that count from delaying most requests, whose way to the carrier
// a busy machine varies by tens of milliseconds.
const paceMargin = 1.10

// interval is the time between two dials of c.
func interval(c agentline.Campaign) time.Duration {
	if c.CallsPerSecond <= 0 {
		return time.Second
	}
	return time.Duration(float64(time.Second) * paceMargin / c.CallsPerSecond)
}

// dialOne claims a dial of ct, waiting for the campaign's rate slot, and
// places its call in the background; ok is false when the pass must stop.
// Claims are paced at the same interval as the carrier's requests (the
// send slot), so that no more contacts wait in calling for their request's
// slot than the variation between claim and request makes.
func (p *pass) dialOne(ctx context.Context, c agentline.Campaign, ct agentline.CampaignContact) (stop stopReason, ok bool) {
	for {
		r, err := p.e.store.ClaimDial(ctx, agentline.DialClaim{ProjectID: p.projectID, CampaignID: p.campaignID, ContactID: ct.ID,
			Now: p.e.now(), Interval: interval(c)})
		if err != nil {
			p.e.log.Warn("campaign engine: could not claim a dial", "campaign_id", p.campaignID, "contact_id", ct.ID, "err", err)
			return stopBudget, false
		}
		switch r.Result {
		case agentline.Claimed:
			p.dials.Go(func() { p.place(context.WithoutCancel(ctx), c, ct, r.Dial) })
			return 0, true
		case agentline.ClaimContactGone, agentline.ClaimDoNotCall:
			return 0, true
		case agentline.ClaimFull:
			return stopFull, false
		case agentline.ClaimNotRunning:
			return stopNotRunning, false
		}
		// ClaimSlotBusy: wait for the slot, within the budget.
		wait := r.NextDialAt.Sub(p.e.now())
		if time.Now().Add(wait).After(p.deadline) {
			return stopBudget, false
		}
		select {
		case <-ctx.Done():
			return stopBudget, false
		case <-time.After(max(wait, time.Millisecond)):
		}
	}
}

// place places the claimed dial's call. A call the phone channel refused
// for now (the project's cap on live calls, a draining instance, a setting
// missing) gives its claim back and stops the pass: the contact is not to
// blame, and is dialed when calls can be placed. A call the carrier
// refused fails the attempt, and the retry rule decides. A call whose
// request got no answer keeps its dial calling: recovery asks the carrier.
func (p *pass) place(ctx context.Context, c agentline.Campaign, ct agentline.CampaignContact, d agentline.CampaignDial) {
	mode := carrier.AMDEnable
	if c.Voicemail.Action == agentline.VoicemailLeaveMessage {
		mode = carrier.AMDDetectMessageEnd
	}
	log := p.e.log.With("campaign_id", c.ID, "contact_id", ct.ID, "dial_id", d.ID, "attempt", d.Attempt)
	_, err := p.e.dialer.Dial(ctx, DialRequest{ProjectID: c.ProjectID, AgentID: c.AgentID, To: ct.PhoneNumber,
		MachineDetection: mode, DialID: d.ID, Interval: interval(c)})
	if err == nil {
		return
	}
	if agentline.ErrorCode(err) != agentline.ECarrier {
		p.refused.Store(true)
		if _, uerr := p.e.store.UnclaimDial(ctx, c.ProjectID, d.ID); uerr != nil {
			log.Error("campaign engine: could not give back a dial that was not placed", "err", uerr)
		}
		log.Warn("campaign engine: the call could not be placed now; the contact waits", "err", err)
		return
	}
	log.Info("campaign engine: the carrier refused a call", "err", err)
	if _, serr := p.e.store.SettleDial(ctx, c.ProjectID, d.ID, p.e.failed); serr != nil {
		log.Error("campaign engine: could not record a failed dial", "err", serr)
	}
}

// failed settles a dial that placed no call as failed.
func (e *Engine) failed(cc agentline.CampaignCall) (agentline.DialSettlement, bool) {
	return cc.Settle(agentline.ContactFailed, e.now())
}
