package agentline

import (
	"strconv"
	"time"
)

// The campaign dialing engine's domain: its jobs, the claim of one dial,
// and the rule that turns a dial's call into its contact's next status.
// The rule lives here, apart from the engine, because two owners apply it:
// package conversation, in the transaction that ends a campaign call, and
// the engine, when the carrier never got a dial.

// DialCampaign is the job that dials a running campaign's due contacts, as
// fast as its limits allow. The transaction that starts or resumes a
// campaign, or adds contacts to a running one, inserts it; so does the end
// of a campaign call that leaves contacts waiting. One waits or runs per
// campaign at a time (the job queue coalesces the rest).
type DialCampaign struct {
	ProjectID  int64 `json:"project_id"`
	CampaignID int64 `json:"campaign_id"`
}

// Kind names DialCampaign's worker.
func (DialCampaign) Kind() string { return "dial_campaign" }

// SweepCampaigns is the recurring job that keeps running campaigns going
// whatever wake was lost: it reconciles dials an instance left unfinished
// when it died, completes campaigns with nobody left to call, and dials
// those with contacts due.
type SweepCampaigns struct{}

// Kind names SweepCampaigns' worker.
func (SweepCampaigns) Kind() string { return "sweep_campaigns" }

// DialClaim asks for one dial of a contact of a running campaign: in one
// transaction, the campaign's rate slot is taken (its next_dial_at moves
// Interval past Now), its live dials are counted against its
// max_concurrent_calls, the number is checked against the do-not-call
// list, and the contact becomes calling with its attempt's dial logged.
type DialClaim struct {
	ProjectID, CampaignID, ContactID int64
	Now                              time.Time
	// Interval is the time between two dials of the campaign: one over
	// its calls_per_second.
	Interval time.Duration
}

// ClaimResult says how a DialClaim went.
type ClaimResult int

// The results of a DialClaim.
const (
	// Claimed: the contact is calling and Dial is its attempt.
	Claimed ClaimResult = iota
	// ClaimNotRunning: the campaign is no longer running (paused,
	// cancelled, completed): no dial.
	ClaimNotRunning
	// ClaimSlotBusy: the campaign's rate allows its next dial at
	// NextDialAt only.
	ClaimSlotBusy
	// ClaimFull: the campaign has max_concurrent_calls dials live.
	ClaimFull
	// ClaimContactGone: the contact is no longer due (dialed by another
	// instance, put on the do-not-call list, deferred).
	ClaimContactGone
	// ClaimDoNotCall: the number is on the do-not-call list; the contact
	// is now do_not_call.
	ClaimDoNotCall
)

// DialClaimed is the answer to a DialClaim.
type DialClaimed struct {
	Result     ClaimResult
	Dial       CampaignDial // when Claimed
	NextDialAt time.Time    // when ClaimSlotBusy
}

// CampaignCall is a dial of a campaign as the transaction that settles it
// sees it: the dial, its contact and its campaign.
type CampaignCall struct {
	Campaign Campaign
	Contact  CampaignContact
	Dial     CampaignDial
}

// DialSettlement is what a dial came to and what becomes of its contact.
type DialSettlement struct {
	ProjectID, CampaignID, ContactID, DialID int64
	// Attempt is the dial's attempt: the contact is settled only while it
	// is still on that attempt.
	Attempt int
	// From is the contact's status the settlement applies to (calling, or
	// a final status a call set, such as opted_out).
	From string
	// Outcome is the dial's outcome, a contact status.
	Outcome string
	// Status is the contact's status from now on: pending (a retry, at
	// NextAttemptAt) or its final status.
	Status        string
	NextAttemptAt *time.Time
	// ConversationID is the dial's conversation ("" when it placed no
	// call).
	ConversationID string
}

// Final reports whether the contact will not be dialed again.
func (s DialSettlement) Final() bool { return s.Status != ContactPending }

// CallOutcome is what a campaign call that has ended came to, as a contact
// status: an answering machine is voicemail whatever the call's status;
// otherwise a completed call reached a person (or detection could not
// tell), busy is busy, no-answer is no_answer, and a failed or canceled
// call failed. A fax is failed: nobody will answer it.
func CallOutcome(call Call) string {
	switch {
	case AnsweredByMachine(call.AnsweredBy):
		return ContactVoicemail
	case call.AnsweredBy == AnsweredByFax:
		return ContactFailed
	}
	switch call.Status {
	case CallCompleted:
		return ContactCompleted
	case CallBusy:
		return ContactBusy
	case CallNoAnswer:
		return ContactNoAnswer
	}
	return ContactFailed
}

// Retried reports whether an outcome is dialed again while attempts are
// left: nobody was reached. A voicemail on which a message was left is
// not: the message is the campaign's word.
func Retried(outcome string, messageLeft bool) bool {
	switch outcome {
	case ContactBusy, ContactNoAnswer, ContactFailed:
		return true
	case ContactVoicemail:
		return !messageLeft
	}
	return false
}

// MessageLeft reports whether a message was left on the machine that
// answered the dial: the engine marks the dial voicemail before it asks
// the carrier to speak the message, while the call still lives.
func (cc CampaignCall) MessageLeft() bool { return cc.Dial.Outcome == ContactVoicemail }

// Settle decides what the dial came to (outcome) and what becomes of its
// contact at now: while attempts are left, an outcome that reached nobody
// is retried (pending again, retry_after later); otherwise the outcome is
// the contact's final status. A contact a call already gave a final
// status (opted_out, asked during the call) keeps it, and the dial's
// outcome is that status. ok is false when there is nothing to settle:
// the dial was settled already, or its contact moved on to another
// attempt.
func (cc CampaignCall) Settle(outcome string, now time.Time) (s DialSettlement, ok bool) {
	ct, d := cc.Contact, cc.Dial
	if ct.Attempts != d.Attempt {
		return s, false
	}
	s = DialSettlement{ProjectID: ct.ProjectID, CampaignID: ct.CampaignID, ContactID: ct.ID, DialID: d.ID, Attempt: d.Attempt,
		From: ct.Status, Outcome: outcome, Status: outcome}
	if d.CallID != nil {
		s.ConversationID = CallConversationID(*d.CallID)
	}
	switch ct.Status {
	case ContactCalling:
	case ContactOptedOut, ContactDoNotCall:
		if d.Outcome != "" && d.Outcome != ContactVoicemail {
			return s, false
		}
		s.Outcome, s.Status = ct.Status, ct.Status
		return s, true
	default:
		return s, false
	}
	if Retried(outcome, cc.MessageLeft()) && ct.Attempts < cc.Campaign.MaxAttempts {
		next := now.UTC().Add(cc.Campaign.RetryAfter)
		s.Status, s.NextAttemptAt = ContactPending, &next
	}
	return s, true
}

// CampaignSubject is the subject of campaign.started and
// campaign.completed, so that an endpoint receives a campaign's start
// before its completion.
func CampaignSubject(campaignID int64) string {
	return "campaign:" + strconv.FormatInt(campaignID, 10)
}

// CampaignEventData is the data of campaign.started and
// campaign.completed.
type CampaignEventData struct {
	Campaign Campaign `json:"campaign"`
	// Reopened is set on a campaign.started sent when a form's lead made a
	// completed campaign run again: its campaign.completed is then sent
	// again when it is done again, so a consumer sees started, completed,
	// started (reopened), completed, and never two completions in a row.
	Reopened bool `json:"reopened,omitempty"`
}

// NewCampaignEvent makes a campaign.started or campaign.completed event
// of c (with its counts).
func NewCampaignEvent(typ string, c Campaign) (Event, error) {
	return NewEvent(c.ProjectID, typ, CampaignSubject(c.ID), CampaignEventData{Campaign: c})
}

// NewCampaignReopenedEvent makes the campaign.started event of a completed
// campaign that runs again (Reopened).
func NewCampaignReopenedEvent(c Campaign) (Event, error) {
	return NewEvent(c.ProjectID, EventCampaignStarted, CampaignSubject(c.ID), CampaignEventData{Campaign: c, Reopened: true})
}

// ContactCompletedData is the data of campaign.contact.completed.
type ContactCompletedData struct {
	CampaignID int64           `json:"campaign_id"`
	Contact    CampaignContact `json:"contact"`
	// Outcome is the contact's final status.
	Outcome string `json:"outcome"`
	// ConversationID is the conversation of the contact's last dial ("call_N").
	ConversationID string `json:"conversation_id"`
}

// NewContactCompletedEvent makes the campaign.contact.completed event of a
// contact that reached its final status. Its subject is the conversation
// of the last dial, so that an endpoint receives it after that
// conversation's conversation.ended; a campaign's contacts are not
// ordered among themselves (one subject for all would deliver them one
// after the other), and one whose last dial placed no call has a subject
// of its own.
func NewContactCompletedEvent(ct CampaignContact, outcome, conversationID string) (Event, error) {
	subject := conversationID
	if subject == "" {
		subject = "campaign_contact:" + strconv.FormatInt(ct.ID, 10)
	}
	return NewEvent(ct.ProjectID, EventCampaignContactCompleted, subject,
		ContactCompletedData{CampaignID: ct.CampaignID, Contact: ct, Outcome: outcome, ConversationID: conversationID})
}

// StaleDial is a dial whose call never reached the carrier's books, as
// the engine's recovery finds it (see the store's StaleDials).
type StaleDial struct {
	ProjectID int64
	Dial      CampaignDial
	// CallSID (a placeholder), From, To and ReservedAt describe the dial's
	// reserved call, when Dial.CallID is set.
	CallSID, From, To string
	ReservedAt        time.Time
}
