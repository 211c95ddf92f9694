package agentline

import "encoding/json"

// ToolDefinition is one tool an agent offers its realtime model, in the
// provider-neutral form; the provider packages render it for their wire.
type ToolDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
}

// ToolCall is a model's request to run one tool, from a widget session or a
// phone call.
type ToolCall struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON object
}

// ToolResult is what goes back to the model. Output is always text the model
// can read; when the tool failed, IsError is true and Output says why.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Output  string `json:"output"`
	IsError bool   `json:"is_error,omitempty"`
}
