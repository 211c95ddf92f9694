package agentline

import (
	"encoding/json"
	"strings"
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
