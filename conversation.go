package agentline

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Conversation kinds: a widget session (voice or text), a live chat started
// from a form, a phone call.
const (
	ConversationWidget   = "widget"
	ConversationLiveChat = "live_chat"
	ConversationPhone    = "phone"
)

// Conversation statuses. A conversation is live until it ends: ended (the
// client or the carrier said so), abandoned (nothing was heard from it for
// the idle timeout, or a live chat never connected), failed (a call that
// never connected: busy, no answer, canceled, failed).
const (
	ConversationLive      = "live"
	ConversationEnded     = "ended"
	ConversationAbandoned = "abandoned"
	ConversationFailed    = "failed"
)

// EventHeartbeat is the session event a live widget client reports every
// 30 s: it keeps the session's last event time and is not stored.
const EventHeartbeat = "heartbeat"

// End reasons the server sets on widget conversations; a client may report
// its own in session_ended's data.reason.
const (
	EndReasonEnded          = "ended"
	EndReasonIdleTimeout    = "idle_timeout"
	EndReasonNeverConnected = "never_connected"
)

// CallConversationPrefix starts the id of a phone conversation: "call_"
// and the call record's id. Widget and live chat conversations are
// identified by their session id ("ses_...").
const CallConversationPrefix = "call_"

// CallConversationID is the conversation id of the call record id.
func CallConversationID(callID int64) string {
	return CallConversationPrefix + strconv.FormatInt(callID, 10)
}

// ParseCallConversationID returns the call record id of a phone
// conversation id, and false for any other id.
func ParseCallConversationID(id string) (int64, bool) {
	rest, ok := strings.CutPrefix(id, CallConversationPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, err == nil && n > 0
}

// CallConversationStatus maps a carrier call status to a conversation
// status.
func CallConversationStatus(callStatus string) string {
	switch {
	case !CallStatusFinal(callStatus):
		return ConversationLive
	case callStatus == CallCompleted:
		return ConversationEnded
	}
	return ConversationFailed
}

// Conversation is one widget session, live chat or phone call, in one
// shape across channels.
type Conversation struct {
	ID        string `json:"id"`
	ProjectID int64  `json:"project_id"`
	AgentID   int64  `json:"agent_id"`
	// AgentVersion is the agent version the conversation ran; null for
	// one from before versions began.
	AgentVersion *int   `json:"agent_version"`
	Kind         string `json:"kind"`
	// ChannelID is the widget or form channel; NumberID the phone number.
	ChannelID *int64 `json:"channel_id"`
	NumberID  *int64 `json:"number_id"`
	// Direction, From and To are a call's: inbound or outbound.
	Direction   string     `json:"direction,omitempty"`
	From        string     `json:"from,omitempty"`
	To          string     `json:"to,omitempty"`
	Status      string     `json:"status"`
	StartedAt   time.Time  `json:"started_at"`
	EndedAt     *time.Time `json:"ended_at"`
	LastEventAt *time.Time `json:"last_event_at"`
	DurationMS  int64      `json:"duration_ms"`
	EndReason   string     `json:"end_reason"`
	// CampaignID, ContactID and Variables are a campaign call's (see
	// Call); absent on every other conversation.
	CampaignID *int64            `json:"campaign_id,omitempty"`
	ContactID  *int64            `json:"contact_id,omitempty"`
	Variables  map[string]string `json:"variables,omitempty"`
	Transcript []Line            `json:"transcript"`
	ToolCalls  []ToolUse         `json:"tool_calls"`
	// Latency summarizes the turn latencies measured (null when none): see
	// EventTurnLatency.
	Latency *TurnLatency `json:"latency"`
	// Recording is a phone call's, when the agent records calls; null
	// otherwise.
	Recording *Recording `json:"recording"`
	// Analysis is null for a conversation that is live, or whose agent
	// asks for no analysis.
	Analysis *Analysis `json:"analysis"`
	// Lead is the form submission a live chat was started from.
	Lead *Lead `json:"lead"`
}

// Line is one utterance of a conversation: speaker is user (the visitor or
// caller) or agent.
type Line struct {
	Speaker string    `json:"speaker"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
	// LatencyMS is an agent line's: how long the turn it answers waited
	// for its first audio, when measured.
	LatencyMS *int64 `json:"latency_ms,omitempty"`
}

// ToolUse is one tool call of a conversation with its result. DurationMS
// is known for tool calls the server ran and timed.
type ToolUse struct {
	CallID     string          `json:"call_id"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     string          `json:"result"`
	IsError    bool            `json:"is_error"`
	DurationMS *int64          `json:"duration_ms"`
	At         time.Time       `json:"at"`
}

// ConversationFilter narrows a listing of a project's conversations,
// newest first. Zero fields do not filter.
type ConversationFilter struct {
	ID      string
	Kind    string
	AgentID int64
	// AgentVersion keeps the conversations that ran this agent version.
	AgentVersion int
	ChannelID    int64
	NumberID     int64
	Status       string
	From, To     time.Time // started_at in [From, To)
	// Query finds conversations whose transcript contains it (any case).
	Query string
	// AnalysisStatus keeps the conversations whose analysis has this
	// status; Success those whose analysis found success (true) or not.
	AnalysisStatus string
	Success        *bool
	// After is the cursor of the last conversation of the previous page.
	After *ConversationCursor
	Limit int
}

// ConversationCursor is a position in a newest-first list: the time and
// id of the last row of the previous page. Conversations, sessions and
// leads are read after one.
type ConversationCursor struct {
	StartedAt time.Time
	ID        string
}

// ConversationStat is one group of a project's conversations for analytics:
// one UTC day, kind, channel or number, agent, status and end reason.
type ConversationStat struct {
	Day           string `json:"day"`
	Kind          string `json:"kind"`
	ChannelID     *int64 `json:"channel_id"`
	NumberID      *int64 `json:"number_id"`
	AgentID       int64  `json:"agent_id"`
	Status        string `json:"status"`
	EndReason     string `json:"end_reason"`
	Conversations int64  `json:"conversations"`
	DurationMS    int64  `json:"duration_ms"`
	ToolCalls     int64  `json:"tool_calls"`
	ToolErrors    int64  `json:"tool_errors"`
	// Evaluated counts the conversations whose analysis judged success;
	// Successes those of them it judged successful.
	Evaluated int64 `json:"evaluated"`
	Successes int64 `json:"successes"`
	// SuccessRate is Successes / Evaluated; null when none was evaluated.
	SuccessRate *float64 `json:"success_rate"`
}

// SuccessRate is successes / evaluated, or nil when nothing was evaluated.
func SuccessRate(successes, evaluated int64) *float64 {
	if evaluated == 0 {
		return nil
	}
	r := float64(successes) / float64(evaluated)
	return &r
}

// LeadStat counts one day of one form channel's leads.
type LeadStat struct {
	Day       string `json:"day"`
	ChannelID int64  `json:"channel_id"`
	Leads     int64  `json:"leads"`
}

// ConversationEventData is the data of conversation.started and
// conversation.ended events.
type ConversationEventData struct {
	Conversation Conversation `json:"conversation"`
}

// NewConversationEvent makes a conversation.started or conversation.ended
// event of c; its subject is the conversation id, so that one
// conversation's events reach an endpoint in order.
func NewConversationEvent(typ string, c Conversation) (Event, error) {
	return NewEvent(c.ProjectID, typ, c.ID, ConversationEventData{Conversation: c})
}

// SweepConversations is the recurring job that ends widget conversations
// nothing was heard from for the idle timeout.
type SweepConversations struct{}

// Kind names SweepConversations' worker.
func (SweepConversations) Kind() string { return "sweep_conversations" }

// ReconcileCalls is the job that asks the carrier about phone calls our
// records show live but nobody has reported on for a while (their instance
// died, a status callback was lost) and applies the final statuses it
// learns. All asks about every live call not heard of since the job was
// enqueued, however recent: the run each instance enqueues when it starts.
type ReconcileCalls struct {
	All bool `json:"all,omitempty"`
}

// Kind names ReconcileCalls' worker.
func (ReconcileCalls) Kind() string { return "reconcile_calls" }

// ConversationDelivery is a webhook delivery of one of a conversation's
// events, with the URL of the endpoint it went to: the conversation page
// shows which of the customer's systems heard about it.
type ConversationDelivery struct {
	WebhookDelivery
	WebhookURL string `json:"webhook_url"`
}

// ConversationIDAttribute is the trace attribute that links a
// conversation's spans across the process: its phone call or session, and
// the jobs that follow it (analysis, deliveries of its events).
const ConversationIDAttribute = "agentline.conversation_id"
