package agentline

import (
	"crypto/rand"
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// ChannelType is how visitors reach an agent on a website.
type ChannelType string

// Channel types. A form channel's own settings are in settings.form.
const (
	ChannelVoiceWidget ChannelType = "voice_widget"
	ChannelForm        ChannelType = "form"
)

// Channel is one place on a website where visitors talk to an agent.
type Channel struct {
	ID        int64           `json:"id"`
	ProjectID int64           `json:"project_id"`
	AgentID   *int64          `json:"agent_id"`
	Type      ChannelType     `json:"type"`
	Name      string          `json:"name"`
	Settings  ChannelSettings `json:"settings"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// ChannelSettings are the widget's cosmetic settings.
type ChannelSettings struct {
	Color          string `json:"color"`
	Position       string `json:"position"`
	ShowTranscript bool   `json:"show_transcript"`
	ShowTextChat   bool   `json:"show_text_chat"`
	// Form is a form channel's form; voice_widget channels have none.
	Form *FormSettings `json:"form,omitempty"`
}

// FormGate reports whether the settings are a live chat form's: the widget
// shows the form first and connects to the agent after it is sent.
func (s ChannelSettings) FormGate() bool { return s.Form != nil && s.Form.Mode == FormLiveChat }

// Public is what visitors may see of the settings: all but the form's
// notify_url and campaign_id.
func (s ChannelSettings) Public() ChannelSettings {
	if s.Form != nil {
		f := *s.Form
		f.NotifyURL, f.CampaignID = "", nil
		s.Form = &f
	}
	return s
}

// Widget positions.
const (
	PositionBottomRight = "bottom-right"
	PositionBottomLeft  = "bottom-left"
)

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Validate checks the channel's own fields and fills defaults. Whether the
// agent belongs to the project is for the caller to check.
func (c *Channel) Validate() error {
	c.Name = strings.TrimSpace(c.Name)
	switch c.Type {
	case ChannelVoiceWidget, ChannelForm:
	case "":
		return Invalid("type", "type is required: voice_widget or form")
	default:
		return Invalid("type", "type %q is not voice_widget or form", c.Type)
	}
	if c.Name == "" {
		return Invalid("name", "name is required")
	}
	if len(c.Name) > 200 {
		return Invalid("name", "name is longer than 200 characters")
	}
	if c.Type == ChannelVoiceWidget && c.AgentID == nil {
		return Invalid("agent_id", "agent_id is required for a voice_widget channel")
	}
	switch {
	case c.Type == ChannelVoiceWidget && c.Settings.Form != nil:
		return Invalid("settings.form", "only form channels have settings.form")
	case c.Type == ChannelForm:
		if c.Settings.Form == nil {
			c.Settings.Form = DefaultFormSettings()
		}
		if err := c.Settings.Form.Validate(); err != nil {
			return err
		}
		if c.Settings.Form.Mode == FormLiveChat && c.AgentID == nil {
			return Invalid("agent_id", "agent_id is required for a live_chat form channel")
		}
	}
	if c.Settings.Color == "" {
		c.Settings.Color = "#2563eb"
	}
	if !hexColor.MatchString(c.Settings.Color) {
		return Invalid("settings.color", "color %q is not of the form #rrggbb", c.Settings.Color)
	}
	c.Settings.Color = strings.ToLower(c.Settings.Color)
	switch c.Settings.Position {
	case "":
		c.Settings.Position = PositionBottomRight
	case PositionBottomRight, PositionBottomLeft:
	default:
		return Invalid("settings.position", "position %q is not bottom-right or bottom-left", c.Settings.Position)
	}
	return nil
}

// WidgetKeyPrefix starts every public widget key.
const WidgetKeyPrefix = "svc_pk_"

// WidgetKey is a channel's public key as stored: never the key itself, only
// its hash and its first characters.
type WidgetKey struct {
	ID                 int64      `json:"-"`
	ChannelID          int64      `json:"channel_id"`
	ProjectID          int64      `json:"project_id"`
	Prefix             string     `json:"prefix"`
	AllowedOrigins     []string   `json:"allowed_origins"`
	RateLimitPerMinute int64      `json:"rate_limit_per_minute"`
	RateLimitPerDay    *int64     `json:"rate_limit_per_day"`
	CreatedAt          time.Time  `json:"created_at"`
	LastUsedAt         *time.Time `json:"last_used_at"`
}

// DefaultRateLimitPerMinute is a new key's per-minute limit.
const DefaultRateLimitPerMinute = 60

// WidgetSession is one visitor's conversation with an agent through a
// channel. Its id is an opaque string.
type WidgetSession struct {
	ID         string     `json:"id"`
	ProjectID  int64      `json:"project_id"`
	ChannelID  int64      `json:"channel_id"`
	AgentID    int64      `json:"agent_id"`
	Origin     string     `json:"origin"`
	Provider   Provider   `json:"provider"`
	Model      string     `json:"model"`
	StartedAt  time.Time  `json:"started_at"`
	EndedAt    *time.Time `json:"ended_at"`
	DurationMS int64      `json:"duration_ms"`
	ToolCalls  int64      `json:"tool_calls"`
	Errors     int64      `json:"errors"`
	// AgentVersion is the agent version the session ran; 0 before
	// versions began. Conversations answer it as agent_version.
	AgentVersion int `json:"-"`
}

// SessionEvent is one thing that happened in a session, reported by the
// client or recorded by the server.
type SessionEvent struct {
	Type string          `json:"type"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data"`
}

// Session event types accepted by the analytics endpoint.
const (
	EventSessionStarted = "session_started"
	EventSessionEnded   = "session_ended"
	EventTranscript     = "transcript"
	EventToolCall       = "tool_call"
	EventError          = "error"
)

// SessionFilter narrows a listing of sessions. Zero fields do not filter.
type SessionFilter struct {
	// ID picks one session.
	ID        string
	ChannelID int64
	AgentID   int64
	From, To  time.Time // started_at in [From, To)
	Limit     int
	// Offset skips rows (the deprecated offset parameter); After starts
	// the list after the row at this time and id (the cursor) instead.
	Offset int
	After  *ConversationCursor
}

// SessionWithEvents is a session with everything recorded in it.
type SessionWithEvents struct {
	WidgetSession
	Events []SessionEvent
}

// SessionView is one session with its transcript, tool calls and errors,
// as the sessions list and a lead's conversation show it: the widget and
// the form channel answer with the same shape.
type SessionView struct {
	WidgetSession
	Transcript []TranscriptLine  `json:"transcript"`
	ToolCalls  []json.RawMessage `json:"tool_calls"` // replaces the count of the same name
	Errors     []json.RawMessage `json:"errors"`     // replaces the count of the same name
}

// TranscriptLine is one utterance of a session's transcript.
type TranscriptLine struct {
	Role string    `json:"role"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// NewSessionView builds the view of a session and its events.
func NewSessionView(s SessionWithEvents) SessionView {
	v := SessionView{WidgetSession: s.WidgetSession, Transcript: []TranscriptLine{}, ToolCalls: []json.RawMessage{}, Errors: []json.RawMessage{}}
	for _, e := range s.Events {
		switch e.Type {
		case EventTranscript:
			var t TranscriptLine
			json.Unmarshal(e.Data, &t)
			t.At = e.At
			v.Transcript = append(v.Transcript, t)
		case EventToolCall:
			v.ToolCalls = append(v.ToolCalls, withAt(e))
		case EventError:
			v.Errors = append(v.Errors, withAt(e))
		}
	}
	return v
}

// withAt is the event's data object with its time added as "at".
func withAt(e SessionEvent) json.RawMessage {
	m := map[string]json.RawMessage{}
	json.Unmarshal(e.Data, &m)
	at, _ := json.Marshal(e.At)
	m["at"] = at
	b, _ := json.Marshal(m)
	return b
}

// NewSessionID returns a new session id: ses_ and 24 random base62
// characters. Both a widget session and a live chat form's submission
// create sessions, so the id's shape lives with the session.
func NewSessionID() (string, error) {
	s, err := RandomBase62(24)
	return "ses_" + s, err
}

// Base62 is the alphabet of session ids and widget keys: safe in URLs and
// headers without escaping.
const Base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomBase62 returns n uniformly random Base62 characters.
func RandomBase62(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			// 248 = 4*62: rejecting larger bytes keeps the draw uniform.
			if b < 248 && len(out) < n {
				out = append(out, Base62[b%62])
			}
		}
	}
	return string(out), nil
}

// AnalyticsRow is one day of one channel's sessions.
type AnalyticsRow struct {
	Day       string  `json:"day"` // YYYY-MM-DD, UTC
	ChannelID int64   `json:"channel_id"`
	Sessions  int64   `json:"sessions"`
	Minutes   float64 `json:"minutes"`
	ToolCalls int64   `json:"tool_calls"`
	Errors    int64   `json:"errors"`
}
