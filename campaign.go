package agentline

import "time"

// Campaign statuses. A campaign is made a draft; start makes it running,
// pause and resume move it between running and paused, cancel ends it from
// any of those three, and the dialing engine completes a running campaign
// once none of its contacts is left to call.
const (
	CampaignDraft     = "draft"
	CampaignRunning   = "running"
	CampaignPaused    = "paused"
	CampaignCompleted = "completed"
	CampaignCancelled = "cancelled"
)

// Contact statuses. A contact is pending until it is dialed (and again
// while it waits for a retry), calling while a dial is live, and then has
// the outcome of its last call. do_not_call is a number on the project's
// do-not-call list, which is never dialed; opted_out is a person who asked
// on a call not to be called again.
const (
	ContactPending   = "pending"
	ContactCalling   = "calling"
	ContactCompleted = "completed"
	ContactVoicemail = "voicemail"
	ContactBusy      = "busy"
	ContactNoAnswer  = "no_answer"
	ContactFailed    = "failed"
	ContactOptedOut  = "opted_out"
	ContactDoNotCall = "do_not_call"
)

// ContactStatuses lists every contact status, in the order a campaign's
// contacts go through them.
func ContactStatuses() []string {
	return []string{ContactPending, ContactCalling, ContactCompleted, ContactVoicemail, ContactBusy,
		ContactNoAnswer, ContactFailed, ContactOptedOut, ContactDoNotCall}
}

// What a campaign call does when a machine answers.
const (
	VoicemailHangUp       = "hang_up"
	VoicemailLeaveMessage = "leave_message"
)

// CallingWindow is the part of the week in which a campaign may call, in
// the callee's local time: the named days (mon … sun), from Start
// (included) to End (excluded), each "HH:MM". Its rules (validation, when
// it is open in a zone) belong to internal/campaign, whose Window is this
// type with its methods.
type CallingWindow struct {
	Days  []string `json:"days"`
	Start string   `json:"start"`
	End   string   `json:"end"`
}

// Equal reports whether w and o are the same window.
func (w CallingWindow) Equal(o CallingWindow) bool {
	if w.Start != o.Start || w.End != o.End || len(w.Days) != len(o.Days) {
		return false
	}
	for i := range w.Days {
		if w.Days[i] != o.Days[i] {
			return false
		}
	}
	return true
}

// Voicemail says what a campaign call does when a machine answers: hang
// up, or wait for the beep and speak Message.
type Voicemail struct {
	Action  string `json:"action"`
	Message string `json:"message,omitempty"`
}

// Campaign is a list of people an agent calls from its number, inside a
// calling window in each callee's local time.
type Campaign struct {
	ID            int64         `json:"id"`
	ProjectID     int64         `json:"project_id"`
	AgentID       int64         `json:"agent_id"`
	Name          string        `json:"name"`
	Status        string        `json:"status"`
	CallingWindow CallingWindow `json:"calling_window"`
	// MaxConcurrentCalls and CallsPerSecond bound the campaign's own
	// dialing; the project's live-call limit still caps every call.
	MaxConcurrentCalls int     `json:"max_concurrent_calls"`
	CallsPerSecond     float64 `json:"calls_per_second"`
	MaxAttempts        int     `json:"max_attempts"`
	// RetryAfter is how long a contact waits between attempts. The API
	// spells it as a duration string ("1h"), so it is not marshalled here.
	RetryAfter time.Duration `json:"-"`
	Voicemail  Voicemail     `json:"voicemail"`
	// NextDialAt is the dialing engine's rate limit shared by instances:
	// the earliest time the campaign's next dial may start.
	NextDialAt time.Time      `json:"-"`
	Counts     CampaignCounts `json:"counts"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
	StartedAt  *time.Time     `json:"started_at"`
	FinishedAt *time.Time     `json:"finished_at"`
}

// CampaignCounts counts a campaign's contacts by status.
type CampaignCounts struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Calling   int `json:"calling"`
	Completed int `json:"completed"`
	Voicemail int `json:"voicemail"`
	Busy      int `json:"busy"`
	NoAnswer  int `json:"no_answer"`
	Failed    int `json:"failed"`
	OptedOut  int `json:"opted_out"`
	DoNotCall int `json:"do_not_call"`
}

// Add counts n more contacts of status (and in Total).
func (c *CampaignCounts) Add(status string, n int) {
	c.Total += n
	switch status {
	case ContactPending:
		c.Pending += n
	case ContactCalling:
		c.Calling += n
	case ContactCompleted:
		c.Completed += n
	case ContactVoicemail:
		c.Voicemail += n
	case ContactBusy:
		c.Busy += n
	case ContactNoAnswer:
		c.NoAnswer += n
	case ContactFailed:
		c.Failed += n
	case ContactOptedOut:
		c.OptedOut += n
	case ContactDoNotCall:
		c.DoNotCall += n
	}
}

// ContactConsent records where and when a contact agreed to be called;
// every dial is logged with the consent it relied on.
type ContactConsent struct {
	Source string    `json:"source"`
	At     time.Time `json:"at,omitzero"`
}

// CampaignContact is one person a campaign calls.
type CampaignContact struct {
	ID          int64  `json:"id"`
	CampaignID  int64  `json:"campaign_id"`
	ProjectID   int64  `json:"-"`
	PhoneNumber string `json:"phone_number"`
	// Timezone is the contact's IANA zone, or "" when the zones of its
	// number apply.
	Timezone  string            `json:"timezone"`
	Variables map[string]string `json:"variables"`
	Consent   *ContactConsent   `json:"consent"`
	Status    string            `json:"status"`
	Attempts  int               `json:"attempts"`
	// NextAttemptAt is when a pending contact may be dialed next (its
	// window permitting); nil for one that will not be dialed again.
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	LastCallID    *int64     `json:"-"`
	// ConversationIDs are the conversations of its dials, first first.
	ConversationIDs []string `json:"conversation_ids"`
	// LastOutcome is how its last dial ended, nil before any.
	LastOutcome *ContactOutcome `json:"last_outcome"`
	// Dials are its dial attempts, read for exports only.
	Dials     []CampaignDial `json:"-"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// ContactOutcome is how a contact's last dial ended: what the call came
// to, and what the analysis of its conversation found, when it ran.
type ContactOutcome struct {
	ConversationID string `json:"conversation_id"`
	// Outcome is the dial's outcome, a contact status ("" while live).
	Outcome string `json:"outcome"`
	// Success and Summary are the analysis' verdict, once it is done.
	Success *bool  `json:"success"`
	Summary string `json:"summary"`
}

// CampaignDial is one dial attempt of a contact, logged with the consent
// it relied on. At most one dial exists per contact and attempt number.
type CampaignDial struct {
	ID         int64           `json:"id"`
	CampaignID int64           `json:"campaign_id"`
	ContactID  int64           `json:"contact_id"`
	Attempt    int             `json:"attempt"`
	CallID     *int64          `json:"call_id"`
	DialedAt   time.Time       `json:"dialed_at"`
	Consent    *ContactConsent `json:"consent"`
	// Outcome is a contact status once the call ended, "" while it lives.
	Outcome string `json:"outcome"`
}

// DoNotCall is a number on a project's do-not-call list: no campaign of
// the project dials it.
type DoNotCall struct {
	PhoneNumber string    `json:"phone_number"`
	Reason      string    `json:"reason"`
	CreatedAt   time.Time `json:"created_at"`
}
