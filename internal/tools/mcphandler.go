package tools

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/httpx"
)

// mcpMask is how the API shows every MCP header value: nothing of it.
const mcpMask = "…"

// Sealer seals and opens MCP tools' headers (a *secretbox.Box).
type Sealer interface {
	Seal(plaintext, context string) (string, error)
	Open(sealed, context string) (string, error)
}

// WithMCP lets the handler store MCP sources, their headers sealed by
// sealer, and try them through f ("List tools").
func (h *Handler) WithMCP(f *Facility, sealer Sealer) *Handler {
	h.facility, h.sealer = f, sealer
	return h
}

// applyType sets the type of a new tool; a tool keeps its type.
func (in toolInput) applyType(t *agentline.WebhookTool) error {
	if t.Type == "" {
		t.Type = agentline.ToolWebhook
		if in.Type != nil {
			t.Type = strings.TrimSpace(*in.Type)
		}
	} else if in.Type != nil && strings.TrimSpace(*in.Type) != t.Type {
		return agentline.Invalid("type", "a tool's type cannot change; delete it and create another")
	}
	switch t.Type {
	case agentline.ToolWebhook:
		if in.AllowedTools != nil && len(*in.AllowedTools) > 0 {
			return agentline.Invalid("allowed_tools", "allowed_tools is for MCP tools")
		}
	case agentline.ToolMCP:
		if in.Method != nil || in.Parameters != nil {
			return agentline.Invalid("type", "an MCP tool takes no method or parameters: the server lists its tools")
		}
		if in.AllowedTools != nil {
			t.AllowedTools = *in.AllowedTools
		}
	default:
		return agentline.Invalid("type", "type must be webhook or mcp")
	}
	return nil
}

// mcpReservedHeaders are set by the MCP transport.
var mcpReservedHeaders = map[string]bool{"Accept": true, "Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Last-Event-Id": true}

// validateMCPTool checks an MCP source: the webhook rules for name, URL,
// timeout and headers, and a bounded list of allowed tool names.
func validateMCPTool(t *agentline.WebhookTool, allowPrivate bool) error {
	t.Method = ""
	t.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	for k := range t.Headers {
		if mcpReservedHeaders[k] {
			return agentline.Invalid("headers", "header %s is set by the MCP transport and cannot be configured", k)
		}
	}
	if err := validateTool(t, allowPrivate); err != nil {
		return err
	}
	t.Method = ""
	if strings.Contains(t.Name, mcpNameSep) {
		return agentline.Invalid("name", "an MCP tool's name may not contain %q: it separates the name from the server's tool names", mcpNameSep)
	}
	if len(t.AllowedTools) > mcpMaxTools {
		return agentline.Invalid("allowed_tools", "at most %d names", mcpMaxTools)
	}
	for _, n := range t.AllowedTools {
		if n == "" || len(n) > 128 || strings.ContainsAny(n, "\r\n\x00") {
			return agentline.Invalid("allowed_tools", "each name is 1 to 128 characters on one line")
		}
	}
	return nil
}

// seal seals an MCP tool's headers into t.SealedHeaders, bound to the
// tool's identity; t.Headers stays for the answer, masked.
func (h *Handler) seal(t *agentline.WebhookTool) error {
	if t.Type != agentline.ToolMCP {
		return nil
	}
	t.SealedHeaders = ""
	if len(t.Headers) == 0 {
		return nil
	}
	if h.sealer == nil {
		return agentline.Errorf(agentline.ENotConfigured, "this server cannot store MCP headers (no encryption key)")
	}
	b, err := json.Marshal(t.Headers)
	if err != nil {
		return err
	}
	t.SealedHeaders, err = h.sealer.Seal(string(b), agentline.MCPHeadersContext(t.ProjectID, t.AgentID, t.Name))
	return err
}

func (h *Handler) openHeaders(t agentline.WebhookTool) (map[string]string, error) {
	if h.sealer == nil {
		return nil, agentline.Errorf(agentline.ENotConfigured, "this server cannot read MCP headers (no encryption key)")
	}
	plain, err := h.sealer.Open(t.SealedHeaders, agentline.MCPHeadersContext(t.ProjectID, t.AgentID, t.Name))
	if err != nil {
		return nil, err
	}
	var out map[string]string
	return out, json.Unmarshal([]byte(plain), &out)
}

// opened is t with its MCP headers opened for a masked view; headers that
// cannot be opened are shown as none.
func (h *Handler) opened(t agentline.WebhookTool) agentline.WebhookTool {
	if t.Type == agentline.ToolMCP && t.SealedHeaders != "" {
		t.Headers, _ = h.openHeaders(t)
	}
	return t
}

// listMCPTools is the console's "List tools": it connects to the MCP
// server now and shows its allowed tools, or why it has none.
func (h *Handler) listMCPTools(w http.ResponseWriter, r *http.Request) error {
	toolID, projectID, err := h.auth.AuthorizePath(r, "tool_id", agentline.KindTool, agentline.PermView)
	if err != nil {
		return err
	}
	t, err := h.store.Tool(r.Context(), projectID, toolID)
	if err != nil {
		return err
	}
	if t.Type != agentline.ToolMCP {
		return agentline.Invalid("tool_id", "tool %d is a webhook, not an MCP server", toolID)
	}
	if h.facility == nil {
		return agentline.Errorf(agentline.ENotConfigured, "MCP tools are not served here")
	}
	if err := egress.CheckURL("url", t.URL, h.allowPrivate); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, h.facility.ListMCP(r.Context(), t))
	return nil
}
