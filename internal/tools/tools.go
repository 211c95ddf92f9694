// Package tools is agentline's tool facility: the tools an agent offers its
// realtime model (HTTP webhook tools defined per agent, and the built-in
// search_knowledge_base over the agent's knowledge documents), and the one
// place that runs a tool call, whichever channel the call arrived on.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/httpx"
)

// SearchToolName is the built-in knowledge base search; no webhook tool may
// take the name.
const SearchToolName = "search_knowledge_base"

// Limits of a tool call.
const (
	DefaultTimeout = 10 * time.Second
	MaxTimeout     = 30 * time.Second
	// MaxOutputBytes is the most output handed to the model; longer output
	// is cut and marked truncated.
	MaxOutputBytes = 16 << 10
	// searchResults is how many passages search_knowledge_base returns.
	searchResults = 4
)

// Store is what the facility needs from storage.
type Store interface {
	Tools(ctx context.Context, projectID, agentID int64) ([]agentline.WebhookTool, error)
	ToolByName(ctx context.Context, projectID, agentID int64, name string) (agentline.WebhookTool, error)
	HasKnowledge(ctx context.Context, projectID, agentID int64) (bool, error)
	SearchKnowledge(ctx context.Context, projectID, agentID int64, language, query string, limit int) ([]agentline.Passage, error)
}

// Options configure a Facility.
type Options struct {
	// AllowPrivateWebhooks turns the SSRF guard (internal/egress's policy)
	// off, letting webhook tools, and whoever else sends with Client, reach
	// loopback and private addresses (AGENTLINE_ALLOW_PRIVATE_WEBHOOKS).
	AllowPrivateWebhooks bool
	// Registerer receives the tool metrics; nil registers nowhere.
	Registerer prometheus.Registerer
	// Logger gets one line per call; nil means slog.Default().
	Logger *slog.Logger
	// Resolver resolves webhook host names; nil means net.DefaultResolver.
	Resolver *net.Resolver
	// Sealer opens MCP tools' sealed headers (a *secretbox.Box); nil
	// leaves MCP tools with headers unusable.
	Sealer Opener
}

// Opener opens a sealed secret bound to context.
type Opener interface {
	Open(sealed, context string) (string, error)
}

// Facility lists an agent's tools and runs their calls.
type Facility struct {
	store        Store
	client       *http.Client
	sealer       Opener
	allowPrivate bool
	mcp          mcpPool
	logger       *slog.Logger
	calls        *prometheus.CounterVec
	duration     *prometheus.HistogramVec
}

// New returns a Facility over store.
func New(store Store, opts Options) *Facility {
	control := egress.Control
	if opts.AllowPrivateWebhooks {
		control = nil
	}
	f := &Facility{
		store:        store,
		client:       newWebhookClient(control, opts.Resolver),
		sealer:       opts.Sealer,
		allowPrivate: opts.AllowPrivateWebhooks,
		logger:       opts.Logger,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentline_tool_calls_total",
			Help: "Tool calls by tool name (an MCP server's by the source's name) and outcome (ok, truncated, unknown_tool, invalid_arguments, invalid_tool, timeout, http_error, tool_error, mcp_error, blocked_address, unreachable, canceled, internal).",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentline_tool_call_duration_seconds",
			Help:    "Tool call duration by tool name.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
	}
	if f.logger == nil {
		f.logger = slog.Default()
	}
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(f.calls, f.duration)
	}
	return f
}

// searchDefinition is the built-in tool as the model sees it.
var searchDefinition = agentline.ToolDefinition{
	Name: SearchToolName,
	Description: "Search this agent's knowledge base (help articles, policies, product facts). " +
		"Use it before answering a question about them, and answer from the passages it returns; " +
		"if nothing relevant comes back, say you do not know rather than guessing.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"the customer's question or its key words, in the customer's language"}},"required":["query"],"additionalProperties":false}`),
}

var searchSchema = mustCompileSchema(searchDefinition.Parameters)

// Definitions lists the tools the agent offers its model: webhook tools,
// the allowed tools of its MCP servers (listed now, within
// MCPListTimeout; a server that fails offers none), and
// search_knowledge_base when the agent has knowledge documents.
func (f *Facility) Definitions(ctx context.Context, agent agentline.Agent) ([]agentline.ToolDefinition, error) {
	defs := []agentline.ToolDefinition{}
	has, err := f.store.HasKnowledge(ctx, agent.ProjectID, agent.ID)
	if err != nil {
		return nil, fmt.Errorf("tool definitions of agent %d: %w", agent.ID, err)
	}
	if has {
		defs = append(defs, searchDefinition)
	}
	list, err := f.store.Tools(ctx, agent.ProjectID, agent.ID)
	if err != nil {
		return nil, fmt.Errorf("tool definitions of agent %d: %w", agent.ID, err)
	}
	for _, t := range list {
		if t.Type != agentline.ToolMCP {
			defs = append(defs, agentline.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	return append(defs, f.mcpDefinitions(ctx, agent, list)...), nil
}

// toolError is a failure of the tool that the model reads as the output.
// The output may reach a public widget, so Message is written for the
// caller; the underlying error (names, addresses, resolvers), if any, is
// cause, which only the log sees.
type toolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Status  int    `json:"status,omitempty"` // the webhook's HTTP status, for http_error
	cause   error
}

func (e *toolError) Error() string { return e.Code + ": " + e.Message }

// Execute runs one call. Tool-level failures (unknown tool, invalid
// arguments, timeout, non-2xx, blocked address) come back as a ToolResult
// with IsError=true and an Output the model can read
// ({"error":{"code":"timeout","message":"..."}}); the returned error is only
// for failures of agentline itself (context canceled, database down).
func (f *Facility) Execute(ctx context.Context, agent agentline.Agent, call agentline.ToolCall) (agentline.ToolResult, error) {
	start := time.Now()
	label := "unknown"
	output, truncated, err := f.execute(ctx, agent, call, &label)
	elapsed := time.Since(start)

	outcome := "ok"
	var te *toolError
	switch {
	case errors.As(err, &te):
		outcome = te.Code
	case err != nil && ctx.Err() != nil:
		outcome = "canceled"
	case err != nil:
		outcome = "internal"
	case truncated:
		outcome = "truncated"
	}
	f.calls.WithLabelValues(label, outcome).Inc()
	f.duration.WithLabelValues(label).Observe(elapsed.Seconds())
	level := slog.LevelInfo
	if outcome == "internal" {
		level = slog.LevelError
	}
	// Names and call ids can come from a public widget: bounded in logs.
	attrs := []slog.Attr{
		slog.Int64("agent_id", agent.ID), slog.Int64("project_id", agent.ProjectID), slog.String("tool", clip(call.Name, 100)),
		slog.String("call_id", clip(call.CallID, 100)), slog.Duration("duration", elapsed), slog.String("outcome", outcome),
	}
	switch {
	case te != nil && te.Status != 0:
		attrs = append(attrs, slog.Int("status", te.Status))
	case te != nil && te.cause != nil:
		attrs = append(attrs, slog.String("err", te.cause.Error()))
	case te == nil && err != nil:
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	if id := httpx.RequestID(ctx); id != "" {
		attrs = append(attrs, slog.String("request_id", id))
	}
	f.logger.LogAttrs(ctx, level, "tool call", attrs...)

	if te != nil {
		b, _ := json.Marshal(struct {
			Error *toolError `json:"error"`
		}{te})
		return agentline.ToolResult{CallID: call.CallID, Output: string(b), IsError: true}, nil
	}
	if err != nil {
		return agentline.ToolResult{CallID: call.CallID}, err
	}
	return agentline.ToolResult{CallID: call.CallID, Output: output}, nil
}

// execute runs the call and returns its output. It sets label, the metric
// label of the tool, to the tool's name once the agent is known to have the
// tool; otherwise it stays "unknown", so names made up by a caller cannot
// grow the metrics without bound.
func (f *Facility) execute(ctx context.Context, agent agentline.Agent, call agentline.ToolCall, label *string) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	if call.Name == SearchToolName {
		has, err := f.store.HasKnowledge(ctx, agent.ProjectID, agent.ID)
		if err != nil {
			return "", false, err
		}
		if !has {
			return "", false, unknownTool(call.Name)
		}
		*label = call.Name
		args, err := decodeArguments(call.Arguments)
		if err != nil {
			return "", false, err
		}
		return f.search(ctx, agent, args)
	}
	// Looked up by agent and project: only the agent's own tools run.
	tool, err := f.store.ToolByName(ctx, agent.ProjectID, agent.ID, call.Name)
	if errors.Is(err, agentline.ErrNotFound) {
		return f.callMCP(ctx, agent, call, label)
	}
	if err != nil {
		return "", false, err
	}
	if tool.Type == agentline.ToolMCP {
		// An MCP source is not itself callable: its tools are.
		return "", false, unknownTool(call.Name)
	}
	*label = call.Name
	args, err := decodeArguments(call.Arguments)
	if err != nil {
		return "", false, err
	}
	schema, err := compileSchema(tool.Parameters)
	if err != nil {
		return "", false, &toolError{Code: "invalid_tool", Message: "the tool's parameters schema does not compile: " + err.Error()}
	}
	if err := validateArguments(schema, args); err != nil {
		return "", false, err
	}
	return f.callWebhook(ctx, agent, tool, call, args)
}

func unknownTool(name string) *toolError {
	return &toolError{Code: "unknown_tool", Message: fmt.Sprintf("this agent has no tool named %q", clip(name, 100))}
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// search runs search_knowledge_base.
func (f *Facility) search(ctx context.Context, agent agentline.Agent, args map[string]any) (string, bool, error) {
	if err := validateArguments(searchSchema, args); err != nil {
		return "", false, err
	}
	query, _ := args["query"].(string)
	passages, err := f.store.SearchKnowledge(ctx, agent.ProjectID, agent.ID, agent.Language, query, searchResults)
	if err != nil {
		return "", false, err
	}
	type result struct {
		Source string `json:"source"`
		Text   string `json:"text"`
	}
	out := struct {
		Results []result `json:"results"`
		Note    string   `json:"note,omitempty"`
	}{Results: []result{}}
	for _, p := range passages {
		out.Results = append(out.Results, result{Source: p.Title, Text: p.Text})
	}
	if len(out.Results) == 0 {
		out.Note = "nothing in the knowledge base matches; say so instead of guessing"
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", false, err
	}
	s, truncated := capOutput(b, false)
	return s, truncated, nil
}

// capOutput returns b as valid UTF-8 text of at most MaxOutputBytes (cut
// at a rune boundary), marked when it was cut or when more was left unread.
func capOutput(b []byte, more bool) (string, bool) {
	if len(b) <= MaxOutputBytes && !more {
		return strings.ToValidUTF8(string(b), "\uFFFD"), false
	}
	if len(b) > MaxOutputBytes {
		cut := MaxOutputBytes
		for cut > MaxOutputBytes-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = b[:cut]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD") +
		fmt.Sprintf("\n[output truncated: the tool returned more than %d bytes]", MaxOutputBytes), true
}
