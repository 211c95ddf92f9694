package agentline

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// NumberStatus is the state of a provisioned phone number.
type NumberStatus string

// The three number states of the spec.
const (
	NumberActive     NumberStatus = "active"     // linked to an agent, takes calls
	NumberUnassigned NumberStatus = "unassigned" // owned, linked to no agent
	NumberSuspended  NumberStatus = "suspended"  // kept, but calls are not answered
)

// Valid reports whether s is one of the three states.
func (s NumberStatus) Valid() bool {
	return s == NumberActive || s == NumberUnassigned || s == NumberSuspended
}

// PhoneNumber is a number bought from the carrier for a project.
type PhoneNumber struct {
	ID          int64        `json:"id"`
	ProjectID   int64        `json:"project_id"`
	PhoneNumber string       `json:"phone_number"`
	AgentID     *int64       `json:"agent_id"` // nil when unassigned
	Status      NumberStatus `json:"status"`
	CarrierSID  string       `json:"carrier_sid"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

// Call directions. A test call is placed from the console's browser,
// which speaks the carrier's media stream protocol itself: no number and no
// carrier take part.
const (
	CallInbound  = "inbound"
	CallOutbound = "outbound"
	CallTest     = "test"
)

// Call statuses, as the carrier reports them.
const (
	CallQueued     = "queued"
	CallInitiated  = "initiated"
	CallRinging    = "ringing"
	CallInProgress = "in-progress"
	CallCompleted  = "completed"
	CallBusy       = "busy"
	CallFailed     = "failed"
	CallNoAnswer   = "no-answer"
	CallCanceled   = "canceled"
)

// callStatusRank orders statuses along a call's life. A status update may
// only move a call forward, so callbacks that arrive out of order never
// bring an ended call back to life.
var callStatusRank = map[string]int{
	CallQueued: 1, CallInitiated: 1, CallRinging: 2, CallInProgress: 3,
	CallCompleted: 4, CallBusy: 4, CallFailed: 4, CallNoAnswer: 4, CallCanceled: 4,
}

// ValidCallStatus reports whether s is a status the carrier uses.
func ValidCallStatus(s string) bool { return callStatusRank[s] > 0 }

// CallStatusFinal reports whether a call in status s has ended.
func CallStatusFinal(s string) bool { return callStatusRank[s] == 4 }

// EndReasonReconciled is the end reason of a call whose end we learned by
// asking the carrier (reconciliation), not from its relay or a status
// callback; a later report with a reason of its own replaces it.
const EndReasonReconciled = "reconciled"

// EndReasonTransferred is the end reason of a call whose relay ended
// because the call went on to the agent's transfer number: the relay's
// record leaves the call in progress, and the carrier's status callback
// ends it later.
const EndReasonTransferred = "transferred"

// LiveCallStatuses returns the statuses of calls that have not ended, a new
// slice on each call so that no caller can change another's.
func LiveCallStatuses() []string {
	return []string{CallQueued, CallInitiated, CallRinging, CallInProgress}
}

// CallStatusAdvances reports whether a call in status from may move to to:
// only forward along queued, ringing, in-progress, final; never out of a
// final status.
func CallStatusAdvances(from, to string) bool {
	return callStatusRank[to] > callStatusRank[from]
}

// Call is the record of one phone call of an agent.
type Call struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	AgentID   int64  `json:"agent_id"`
	NumberID  *int64 `json:"number_id"`
	CallSID   string `json:"call_sid"`
	Direction string `json:"direction"`
	From      string `json:"from"`
	To        string `json:"to"`
	Status    string `json:"status"`
	// StreamRef ties an outbound call's media stream to this record before
	// the carrier's call SID is known; it is internal.
	StreamRef string `json:"-"`
	// AgentVersion is the agent version the call ran (a test call's: the
	// one it was asked for); 0 until its stream is admitted, or before
	// versions began. Conversations answer it as agent_version.
	AgentVersion int        `json:"-"`
	StartedAt    *time.Time `json:"started_at"`
	EndedAt      *time.Time `json:"ended_at"`
	DurationS    *int       `json:"duration_s"`
	EndReason    string     `json:"end_reason,omitempty"`
	// AnsweredBy is the carrier's verdict on who answered an outbound call
	// placed with answering machine detection (one of the AnsweredBy...
	// values); empty for every other call, and until the verdict comes.
	AnsweredBy string `json:"answered_by,omitempty"`
	// CampaignID and ContactID link a campaign's call to the campaign and
	// the contact it called; Variables are that contact's, which fill the
	// agent's {{name}} placeholders on this call. The dialing engine sets
	// them; every other call has none.
	CampaignID *int64            `json:"campaign_id,omitempty"`
	ContactID  *int64            `json:"contact_id,omitempty"`
	Variables  map[string]string `json:"variables,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
}

// Who answered an outbound call, as the carrier's answering machine
// detection says (Twilio's AnsweredBy). With detection asked to wait for
// the end of a machine's greeting, a machine is one of the machine_end_*
// verdicts, given once its greeting has ended (a beep, silence, or
// something else); otherwise it is machine_start, given as soon as a
// machine is recognised.
const (
	AnsweredByHuman             = "human"
	AnsweredByMachineStart      = "machine_start"
	AnsweredByMachineEndBeep    = "machine_end_beep"
	AnsweredByMachineEndSilence = "machine_end_silence"
	AnsweredByMachineEndOther   = "machine_end_other"
	AnsweredByFax               = "fax"
	AnsweredByUnknown           = "unknown"
)

// ValidAnsweredBy reports whether s is a verdict the carrier gives.
func ValidAnsweredBy(s string) bool {
	switch s {
	case AnsweredByHuman, AnsweredByFax, AnsweredByUnknown:
		return true
	}
	return AnsweredByMachine(s)
}

// AnsweredByMachine reports whether the verdict s is an answering machine,
// whatever the detection heard of its greeting.
func AnsweredByMachine(s string) bool {
	switch s {
	case AnsweredByMachineStart, AnsweredByMachineEndBeep, AnsweredByMachineEndSilence, AnsweredByMachineEndOther:
		return true
	}
	return false
}

// e164 is a + and 2 to 15 digits, the first not 0.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

// ValidE164 reports whether s is a phone number in E.164 form.
func ValidE164(s string) bool { return e164.MatchString(s) }

// usLocal is a North American number: +1, then an area code and an
// exchange that do not start with 0 or 1.
var usLocal = regexp.MustCompile(`^\+1[2-9][0-9]{2}[2-9][0-9]{6}$`)

// ValidUSNumber reports whether s is a US (NANP) number in E.164 form.
func ValidUSNumber(s string) bool { return usLocal.MatchString(s) }

// CallLogEntry is one thing that happened during a call, kept on the call
// record so it can be read afterwards: a transcript line of either side, a
// tool call with its result, a keypad digit, or a model error.
type CallLogEntry struct {
	Type string `json:"type"`           // transcript, tool_call, dtmf, error
	Role string `json:"role,omitempty"` // transcript: caller or agent
	Text string `json:"text,omitempty"`
	// Data holds a tool call's name, arguments and result.
	Data json.RawMessage `json:"data,omitempty"`
	At   time.Time       `json:"at"`
}

// CallerSpeech reports whether e is something the caller said: a
// transcript line of theirs with words in it (the test a call's analysis
// makes to skip a call where nobody spoke).
func (e CallLogEntry) CallerSpeech() bool {
	return e.Type == EventTranscript && (e.Role == "caller" || e.Role == "user") && strings.TrimSpace(e.Text) != ""
}

// CallFilter selects calls of a project, newest first. Before is an id
// cursor: only calls with a smaller id are listed.
type CallFilter struct {
	AgentID int64
	Status  string
	Before  int64
	Limit   int
}

// CallEvent is one status report about a call, from the carrier's status
// callback or from the answer to a hang-up.
type CallEvent struct {
	CallSID   string
	Status    string
	Direction string // inbound or outbound; used when the record is new
	From, To  string
	At        time.Time // when the carrier says it happened
	DurationS *int      // with final statuses
	EndReason string    // why it ends, when we know more than the status; kept once set
	// Log is appended to the call's log in the same transaction (the
	// relay's transcript and tool calls, when it ends).
	Log []CallLogEntry
	// AgentVersion records the agent version the call runs, when its
	// stream is admitted; 0 leaves the record's as it is.
	AgentVersion int
	// AnsweredBy is machine detection's verdict as the carrier's status
	// callback carries it, kept when the record has none yet: the
	// verdict's own callback may come after the call's end, whose
	// settlement needs it (a machine, not a person).
	AnsweredBy string
}

// PendingCallSID is the placeholder SID a reserved call has until the
// carrier's SID is attached. The colon keeps it apart from any carrier SID.
func PendingCallSID(streamRef string) string { return "pending:" + streamRef }
