package agentline

import (
	"encoding/json"
	"strings"
	"time"
)

// AnalysisSettings are an agent's post-conversation analysis settings.
type AnalysisSettings struct {
	// Summary asks for a short summary of the conversation.
	Summary bool `json:"summary"`
	// SuccessCriteria, in plain words, decide whether the conversation
	// succeeded; empty asks for no success evaluation.
	SuccessCriteria string `json:"success_criteria"`
	// DataSchema is a JSON Schema object of the fields to extract, such as
	// {"type":"object","properties":{"order_id":{"type":"string"}}}; null
	// extracts nothing.
	DataSchema json.RawMessage `json:"data_schema"`
}

// DefaultAnalysis is what a new agent gets: a summary, nothing else.
func DefaultAnalysis() AnalysisSettings { return AnalysisSettings{Summary: true} }

// Enabled reports whether there is anything to analyse.
func (s AnalysisSettings) Enabled() bool {
	return s.Summary || s.SuccessCriteria != "" || len(s.DataSchema) > 0
}

// ParseAnalysisSettings reads an agent's analysis settings as stored; a
// null data_schema reads as none, as the API writes it (Validate), so that
// it does not count as something to extract.
func ParseAnalysisSettings(stored []byte) (AnalysisSettings, error) {
	var s AnalysisSettings
	if err := json.Unmarshal(stored, &s); err != nil {
		return s, err
	}
	if string(s.DataSchema) == "null" {
		s.DataSchema = nil
	}
	return s, nil
}

// Validate checks the sizes and that data_schema is a JSON Schema object
// whose properties are named.
func (s *AnalysisSettings) Validate() error {
	s.SuccessCriteria = strings.TrimSpace(s.SuccessCriteria)
	if len(s.SuccessCriteria) > 5_000 {
		return Invalid("analysis.success_criteria", "success_criteria is longer than 5000 characters")
	}
	if string(s.DataSchema) == "null" {
		s.DataSchema = nil
	}
	if len(s.DataSchema) == 0 {
		return nil
	}
	if len(s.DataSchema) > 20_000 {
		return Invalid("analysis.data_schema", "data_schema is larger than 20000 bytes")
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(s.DataSchema, &schema); err != nil {
		return Invalid("analysis.data_schema", "data_schema must be a JSON Schema object: %v", err)
	}
	if schema.Type != "object" || len(schema.Properties) == 0 {
		return Invalid("analysis.data_schema", `data_schema must be {"type":"object","properties":{...}} with at least one property`)
	}
	return nil
}

// Analysis statuses: pending until the job has run, then done (the
// provider answered), failed (it kept failing; Error says why) or skipped
// (nobody but the agent spoke, so there was nothing to analyse).
const (
	AnalysisPending = "pending"
	AnalysisDone    = "done"
	AnalysisFailed  = "failed"
	AnalysisSkipped = "skipped"
)

// Analysis is what was learned from one conversation after it ended.
type Analysis struct {
	Status  string `json:"status"`
	Summary string `json:"summary"`
	// Success is the verdict on the agent's success_criteria; null when
	// the agent has none, or the analysis is not done.
	Success       *bool  `json:"success"`
	SuccessReason string `json:"success_reason"`
	// Data holds the fields of the agent's data_schema; null without one.
	Data       json.RawMessage `json:"data"`
	Model      string          `json:"model"`
	Error      string          `json:"error"`
	Attempts   int             `json:"attempts"`
	FinishedAt *time.Time      `json:"finished_at"`
}

// AnalyzeConversation is the durable job that analyses one conversation
// that ended. It is enqueued with the conversation's pending analysis, in
// the transaction that ends the conversation, or, for a phone call, in the
// one that brings the call's whole log (see CallLogWait).
type AnalyzeConversation struct {
	ProjectID      int64  `json:"project_id"`
	ConversationID string `json:"conversation_id"`
}

// Kind names AnalyzeConversation's worker.
func (AnalyzeConversation) Kind() string { return "analyze_conversation" }

// CallLogWait is how long a phone call's analysis waits for the call's
// log once the call has ended without it. The relay writes the log's last
// lines when its stream ends, which may come after the carrier's final
// status; an analysis that waits longer than this takes the log as it is
// (the relay's instance died, or no stream ever carried the call).
const CallLogWait = 30 * time.Second

// AnalysisEventData is the data of a conversation.analyzed event.
type AnalysisEventData struct {
	ConversationID string          `json:"conversation_id"`
	AgentID        int64           `json:"agent_id"`
	Summary        string          `json:"summary"`
	Success        *bool           `json:"success"`
	SuccessReason  string          `json:"success_reason"`
	Data           json.RawMessage `json:"data"`
	Model          string          `json:"model"`
	FinishedAt     *time.Time      `json:"finished_at"`
}
