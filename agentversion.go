package agentline

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// AgentSettings is the conversational part of an agent: what a
// conversation runs. Each save that changes it makes a new AgentVersion,
// so a change can be compared, published and rolled back. Name, transfer
// number and recording are the agent's own and are not versioned.
type AgentSettings struct {
	Instructions string           `json:"instructions"`
	Greeting     string           `json:"greeting"`
	Model        string           `json:"model"`
	Provider     Provider         `json:"provider"`
	Voice        string           `json:"voice"`
	Language     string           `json:"language"`
	Analysis     AnalysisSettings `json:"analysis"`
	// Tools and Knowledge name the agent's webhook tools and knowledge
	// documents in use when the version was saved.
	Tools     []VersionTool     `json:"tools"`
	Knowledge []VersionDocument `json:"knowledge_documents"`
}

// VersionTool is one webhook tool as a version saw it: its id, name and
// the time it was last changed, which tells two states of a tool apart.
type VersionTool struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	UpdatedAt time.Time `json:"updated_at"`
}

// VersionDocument is one knowledge document in use; documents are
// immutable, so the id is its version.
type VersionDocument struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
}

// AgentVersion is one immutable, numbered state of an agent's settings.
type AgentVersion struct {
	AgentID   int64         `json:"agent_id"`
	Version   int           `json:"version"`
	Published bool          `json:"published"`
	Settings  AgentSettings `json:"settings"`
	CreatedAt time.Time     `json:"created_at"`
}

// Settings is the versioned part of a, without tools and knowledge, which
// live in their own tables (the store fills them in).
func (a Agent) Settings() AgentSettings {
	return AgentSettings{Instructions: a.Instructions, Greeting: a.Greeting, Model: a.Model, Provider: a.Provider,
		Voice: a.Voice, Language: a.Language, Analysis: a.Analysis}
}

// WithSettings is a running the settings s: what a conversation of a
// published or test version sees.
func (a Agent) WithSettings(s AgentSettings) Agent {
	a.Instructions, a.Greeting, a.Model, a.Provider = s.Instructions, s.Greeting, s.Model, s.Provider
	a.Voice, a.Language, a.Analysis = s.Voice, s.Language, s.Analysis
	return a
}

// FieldChange is one field that differs between two versions, with its
// value in each (JSON, as the versions answer it).
type FieldChange struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from"`
	To    json.RawMessage `json:"to"`
}

// Diff names the fields of to that differ from from, in the order of the
// settings' JSON, comparing each field's JSON encoding.
func (from AgentSettings) Diff(to AgentSettings) ([]FieldChange, error) {
	a, err := settingsFields(from)
	if err != nil {
		return nil, err
	}
	b, err := settingsFields(to)
	if err != nil {
		return nil, err
	}
	changes := []FieldChange{}
	for _, f := range settingsFieldOrder {
		if !bytes.Equal(a[f], b[f]) {
			changes = append(changes, FieldChange{Field: f, From: a[f], To: b[f]})
		}
	}
	return changes, nil
}

// Equal reports whether two settings would run the same conversation.
func (from AgentSettings) Equal(to AgentSettings) bool {
	d, err := from.Diff(to)
	return err == nil && len(d) == 0
}

var settingsFieldOrder = []string{"instructions", "greeting", "model", "provider", "voice", "language",
	"analysis", "tools", "knowledge_documents"}

func settingsFields(s AgentSettings) (map[string]json.RawMessage, error) {
	if s.Tools == nil {
		s.Tools = []VersionTool{}
	}
	if s.Knowledge == nil {
		s.Knowledge = []VersionDocument{}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	// Analysis compares by meaning: its schema's spacing is not a change.
	for f, v := range m {
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			m[f] = buf.Bytes()
		}
	}
	return m, nil
}

// ParseVersion reads an agent version number from a request's field
// (a path segment, a query value): "" is 0, the latest or none; anything
// but a positive integer is invalid_request naming field.
func ParseVersion(field, s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > maxVersion {
		return 0, Invalid(field, "%s must be a version number: a positive integer", field)
	}
	return n, nil
}

// maxVersion bounds a version number well above any agent's saves, so a
// number fits every database's integer.
const maxVersion = 1 << 30

// VersionStat compares one agent version's conversations in a range: how
// many, and how many its analysis judged and found successful.
type VersionStat struct {
	AgentID int64 `json:"agent_id"`
	// AgentVersion is null for conversations from before versions began.
	AgentVersion  *int  `json:"agent_version"`
	Conversations int64 `json:"conversations"`
	Evaluated     int64 `json:"evaluated"`
	Successes     int64 `json:"successes"`
	// SuccessRate is Successes / Evaluated; null when none was evaluated.
	SuccessRate *float64 `json:"success_rate"`
	// AvgTurnLatencyMS is the mean of the version's turn latencies in the
	// range (every channel); null when no turn was measured.
	AvgTurnLatencyMS *float64 `json:"avg_turn_latency_ms"`
}
