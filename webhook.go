package agentline

import (
	"encoding/json"
	"fmt"
	"time"
)

// WebhookTool is a tool an agent's model can call that agentline runs by
// sending the call's arguments to an HTTP endpoint of the customer.
type WebhookTool struct {
	ID        int64 `json:"id"`
	ProjectID int64 `json:"project_id"`
	AgentID   int64 `json:"agent_id"`
	// Type is ToolWebhook or ToolMCP.
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
	URL         string          `json:"url"`
	Method      string          `json:"method"` // GET or POST
	// Headers are sent with every call. Their values are often secrets, so
	// they never leave through JSON: the API shows them masked.
	Headers   map[string]string `json:"-"`
	TimeoutMS int               `json:"timeout_ms"`
	// AllowedTools narrows an MCP server's tools to these names; empty
	// offers them all.
	AllowedTools []string `json:"allowed_tools"`
	// SealedHeaders holds an MCP tool's headers sealed under
	// MCPHeadersContext: they carry tokens, so the database never holds
	// them in clear. Headers is their opened form while a request needs it.
	SealedHeaders string    `json:"-"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// KnowledgeDocument is a text an agent answers from. Its content is kept
// only as indexed chunks.
type KnowledgeDocument struct {
	ID          int64     `json:"id"`
	ProjectID   int64     `json:"project_id"`
	AgentID     int64     `json:"agent_id"`
	Title       string    `json:"title"`
	ContentType string    `json:"content_type"`
	Bytes       int       `json:"bytes"`  // size of the text after conversion
	Chunks      int       `json:"chunks"` // number of indexed passages
	CreatedAt   time.Time `json:"created_at"`
}

// Passage is one search result from an agent's knowledge documents.
type Passage struct {
	DocumentID int64   `json:"document_id"`
	Title      string  `json:"title"` // the document's title
	Text       string  `json:"text"`
	Score      float64 `json:"score"` // higher is better; comparable within one search only
}

// Tool types: an HTTP webhook agentline calls with the arguments, or an MCP
// server (streamable HTTP) whose tools the agent offers.
const (
	ToolWebhook = "webhook"
	ToolMCP     = "mcp"
)

// MCPHeadersContext is the additional data an MCP tool's headers are sealed
// with: the tool's identity, so sealed headers copied to another tool do not
// open there.
func MCPHeadersContext(projectID, agentID int64, name string) string {
	return fmt.Sprintf("mcp-headers:%d:%d:%s", projectID, agentID, name)
}
