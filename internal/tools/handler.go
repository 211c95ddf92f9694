package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// HandlerStore is what the management routes of tools and knowledge need.
type HandlerStore interface {
	Store
	ProjectOf(ctx context.Context, kind agentline.Kind, id int64) (int64, error)
	Agent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error)

	CreateTool(ctx context.Context, t agentline.WebhookTool) (agentline.WebhookTool, error)
	Tool(ctx context.Context, projectID, toolID int64) (agentline.WebhookTool, error)
	UpdateTool(ctx context.Context, t agentline.WebhookTool) (agentline.WebhookTool, error)
	DeleteTool(ctx context.Context, projectID, toolID int64) error

	CreateKnowledgeDocument(ctx context.Context, doc agentline.KnowledgeDocument, language string, chunks []string) (agentline.KnowledgeDocument, error)
	KnowledgeDocuments(ctx context.Context, projectID, agentID int64) ([]agentline.KnowledgeDocument, error)
	DeleteKnowledgeDocument(ctx context.Context, projectID, documentID int64) error
}

// Handler serves the management routes of webhook tools and knowledge.
type Handler struct {
	store        HandlerStore
	auth         *auth.Service
	allowPrivate bool
	// sealer and facility serve MCP tools (WithMCP).
	sealer   Sealer
	facility *Facility
}

// NewHandler returns the handler of the tool and knowledge routes.
// allowPrivate lets a tool's URL name an internal address
// (AGENTLINE_ALLOW_PRIVATE_WEBHOOKS; see internal/egress).
func NewHandler(s HandlerStore, a *auth.Service, allowPrivate bool) *Handler {
	return &Handler{store: s, auth: a, allowPrivate: allowPrivate}
}

// Routes lists the routes of this package, all behind a session token.
func (h *Handler) Routes() []httpx.Route {
	r := h.auth.Route
	return []httpx.Route{
		r("GET", "/api/agents/{agent_id}/tools", h.listTools),
		r("POST", "/api/agents/{agent_id}/tools", h.createTool),
		r("GET", "/api/tools/{tool_id}", h.getTool),
		r("PATCH", "/api/tools/{tool_id}", h.updateTool),
		r("DELETE", "/api/tools/{tool_id}", h.deleteTool),
		r("GET", "/api/tools/{tool_id}/mcp-tools", h.listMCPTools),

		r("GET", "/api/agents/{agent_id}/knowledge", h.listKnowledge),
		r("POST", "/api/agents/{agent_id}/knowledge", h.uploadKnowledge),
		r("GET", "/api/agents/{agent_id}/knowledge/search", h.searchKnowledge),
		r("DELETE", "/api/knowledge/{document_id}", h.deleteKnowledge),
	}
}

// toolView is a webhook tool as the API shows it: header values masked.
type toolView struct {
	agentline.WebhookTool
	Headers map[string]string `json:"headers"`
}

// viewTool masks t's headers: a webhook's show their first characters, an
// MCP server's (opened into t.Headers by the caller) only their names.
func viewTool(t agentline.WebhookTool) toolView {
	masked := make(map[string]string, len(t.Headers))
	for k, v := range t.Headers {
		masked[k] = maskSecret(v)
		if t.Type == agentline.ToolMCP {
			masked[k] = mcpMask
		}
	}
	if t.AllowedTools == nil {
		t.AllowedTools = []string{}
	}
	return toolView{WebhookTool: t, Headers: masked}
}

// maskSecret shows enough of a header value to recognize it, never all of
// it: the first two characters of a long value, nothing of a short one.
func maskSecret(v string) string {
	if len(v) < 12 {
		return "…"
	}
	return v[:2] + "…"
}

// toolInput is the writable part of a webhook tool; nil fields keep their
// value.
type toolInput struct {
	Name        *string            `json:"name"`
	Description *string            `json:"description"`
	Parameters  json.RawMessage    `json:"parameters"`
	URL         *string            `json:"url"`
	Method      *string            `json:"method"`
	Headers     *map[string]string `json:"headers"`
	TimeoutMS   *int               `json:"timeout_ms"`
	Type        *string            `json:"type"`
	// AllowedTools is an MCP source's filter of the server's tool names.
	AllowedTools *[]string `json:"allowed_tools"`
}

var (
	toolName   = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
	// reservedHeaders are set by the HTTP client or by agentline itself.
	reservedHeaders = map[string]bool{
		"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true, "Connection": true,
		"Upgrade": true, "Te": true, "Trailer": true, "Keep-Alive": true, "Proxy-Connection": true,
		"X-Agentline-Agent-Id": true, "X-Agentline-Tool": true, "X-Agentline-Call-Id": true,
	}
)

const (
	maxDescription = 4000
	maxSchemaBytes = 32 << 10
	maxHeaders     = 20
)

// apply sets the given fields on t and validates the result. A header sent
// back in its masked form keeps the stored value, so a console can send the
// set it was shown. allowPrivate is the Handler's.
func (in toolInput) apply(t *agentline.WebhookTool, allowPrivate bool) error {
	if err := in.applyType(t); err != nil {
		return err
	}
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
	}
	if in.Description != nil {
		t.Description = strings.TrimSpace(*in.Description)
	}
	if in.Parameters != nil {
		t.Parameters = in.Parameters
	}
	if in.URL != nil {
		t.URL = strings.TrimSpace(*in.URL)
	}
	if in.Method != nil {
		t.Method = strings.ToUpper(strings.TrimSpace(*in.Method))
	}
	if in.TimeoutMS != nil {
		t.TimeoutMS = *in.TimeoutMS
	}
	if in.Headers != nil {
		next := make(map[string]string, len(*in.Headers))
		for k, v := range *in.Headers {
			name := http.CanonicalHeaderKey(strings.TrimSpace(k))
			if old, ok := lookupHeader(t.Headers, name); ok && (v == maskSecret(old) || v == mcpMask) {
				v = old
			}
			next[name] = v
		}
		t.Headers = next
	}
	if t.Type == agentline.ToolMCP {
		return validateMCPTool(t, allowPrivate)
	}
	return validateTool(t, allowPrivate)
}

func lookupHeader(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

func validateTool(t *agentline.WebhookTool, allowPrivate bool) error {
	if !toolName.MatchString(t.Name) {
		return agentline.Invalid("name", "name must be 1 to 64 letters, digits, _ or -")
	}
	if t.Name == SearchToolName {
		return agentline.Invalid("name", "%s is the built-in knowledge base search; choose another name", SearchToolName)
	}
	if len(t.Description) > maxDescription {
		return agentline.Invalid("description", "description is longer than %d characters", maxDescription)
	}
	if len(t.Parameters) == 0 || string(t.Parameters) == "null" {
		t.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if len(t.Parameters) > maxSchemaBytes {
		return agentline.Invalid("parameters", "parameters schema is larger than %d bytes", maxSchemaBytes)
	}
	if _, err := compileSchema(t.Parameters); err != nil {
		return agentline.Invalid("parameters", "parameters is not a usable JSON Schema: %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, t.Parameters); err == nil {
		t.Parameters = json.RawMessage(compact.Bytes())
	}
	switch {
	case t.URL == "":
		return agentline.Invalid("url", "url is required")
	case len(t.URL) > 2048:
		return agentline.Invalid("url", "url is at most 2048 characters")
	}
	if err := egress.CheckURL("url", t.URL, allowPrivate); err != nil {
		return err
	}
	switch t.Method {
	case "":
		t.Method = http.MethodPost
	case http.MethodGet, http.MethodPost:
	default:
		return agentline.Invalid("method", "method must be GET or POST")
	}
	switch {
	case t.TimeoutMS == 0:
		t.TimeoutMS = int(DefaultTimeout.Milliseconds())
	case t.TimeoutMS < 1 || t.TimeoutMS > int(MaxTimeout.Milliseconds()):
		return agentline.Invalid("timeout_ms", "timeout_ms must be between 1 and %d", MaxTimeout.Milliseconds())
	}
	if len(t.Headers) > maxHeaders {
		return agentline.Invalid("headers", "at most %d headers", maxHeaders)
	}
	for k, v := range t.Headers {
		if !headerName.MatchString(k) {
			return agentline.Invalid("headers", "%q is not a valid header name", k)
		}
		if reservedHeaders[k] {
			return agentline.Invalid("headers", "header %s is set by agentline and cannot be configured", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") || len(v) > 8192 {
			return agentline.Invalid("headers", "header %s has a value with line breaks or longer than 8192 bytes", k)
		}
	}
	return nil
}

func (h *Handler) listTools(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.store.Tools(r.Context(), projectID, agentID)
	if err != nil {
		return err
	}
	out := make([]toolView, len(list))
	for i, t := range list {
		out[i] = viewTool(h.opened(t))
	}
	return listing.WriteWhole(w, r, out, func(t toolView) listing.Cursor { return listing.After(t.ID) })
}

func (h *Handler) createTool(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in toolInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	t := agentline.WebhookTool{ProjectID: projectID, AgentID: agentID}
	if err := in.apply(&t, h.allowPrivate); err != nil {
		return err
	}
	if err := h.seal(&t); err != nil {
		return err
	}
	headers := t.Headers
	if t, err = h.store.CreateTool(r.Context(), t); err != nil {
		return err
	}
	t.Headers = headers
	httpx.WriteJSON(w, http.StatusCreated, viewTool(t))
	return nil
}

func (h *Handler) getTool(w http.ResponseWriter, r *http.Request) error {
	toolID, projectID, err := h.auth.AuthorizePath(r, "tool_id", agentline.KindTool, agentline.PermView)
	if err != nil {
		return err
	}
	t, err := h.store.Tool(r.Context(), projectID, toolID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, viewTool(h.opened(t)))
	return nil
}

func (h *Handler) updateTool(w http.ResponseWriter, r *http.Request) error {
	toolID, projectID, err := h.auth.AuthorizePath(r, "tool_id", agentline.KindTool, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in toolInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	t, err := h.store.Tool(r.Context(), projectID, toolID)
	if err != nil {
		return err
	}
	if t.Type == agentline.ToolMCP && t.SealedHeaders != "" {
		if t.Headers, err = h.openHeaders(t); err != nil {
			return err
		}
	}
	if err := in.apply(&t, h.allowPrivate); err != nil {
		return err
	}
	if err := h.seal(&t); err != nil {
		return err
	}
	headers := t.Headers
	if t, err = h.store.UpdateTool(r.Context(), t); err != nil {
		return err
	}
	t.Headers = headers
	httpx.WriteJSON(w, http.StatusOK, viewTool(t))
	return nil
}

func (h *Handler) deleteTool(w http.ResponseWriter, r *http.Request) error {
	return h.auth.DeletePath(w, r, "tool_id", agentline.KindTool, h.store.DeleteTool)
}
