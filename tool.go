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

// OpenAITool is a tool in the OpenAI realtime session's "tools" list.
type OpenAITool struct {
	Type        string          `json:"type"` // always "function"
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// OpenAITools renders definitions for an OpenAI realtime session.
func OpenAITools(defs []ToolDefinition) []OpenAITool {
	out := make([]OpenAITool, len(defs))
	for i, d := range defs {
		out[i] = OpenAITool{Type: "function", Name: d.Name, Description: d.Description, Parameters: d.Parameters}
	}
	return out
}

// GeminiTool is one entry of a Gemini Live setup's "tools" list.
type GeminiTool struct {
	FunctionDeclarations []GeminiFunctionDeclaration `json:"functionDeclarations"`
}

// GeminiFunctionDeclaration is a function as Gemini declares it.
type GeminiFunctionDeclaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// GeminiTools renders definitions for a Gemini Live session: one tool
// holding every function declaration, or none when there are no tools.
func GeminiTools(defs []ToolDefinition) []GeminiTool {
	if len(defs) == 0 {
		return nil
	}
	decls := make([]GeminiFunctionDeclaration, len(defs))
	for i, d := range defs {
		decls[i] = GeminiFunctionDeclaration(d)
	}
	return []GeminiTool{{FunctionDeclarations: decls}}
}
