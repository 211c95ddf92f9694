package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentline/agentline"
)

// mcpDefinitions lists the tools of every MCP source of the agent, the
// servers asked in parallel and each bounded by MCPListTimeout. A server
// that fails gives no tools and a log line; the session goes on.
func (f *Facility) mcpDefinitions(ctx context.Context, agent agentline.Agent, list []agentline.WebhookTool) []agentline.ToolDefinition {
	var sources []agentline.WebhookTool
	for _, t := range list {
		if t.Type == agentline.ToolMCP {
			sources = append(sources, t)
		}
	}
	if len(sources) == 0 {
		return nil
	}
	got := make([][]mcpTool, len(sources))
	var wg sync.WaitGroup
	for i, t := range sources {
		wg.Go(func() {
			lctx, cancel := context.WithTimeout(ctx, MCPListTimeout)
			defer cancel()
			tools, _, err := f.mcpList(lctx, t)
			if err != nil {
				f.logMCPFailure(ctx, agent, t, err)
				return
			}
			got[i] = tools
		})
	}
	wg.Wait()
	var defs []agentline.ToolDefinition
	for _, tools := range got {
		for _, m := range tools {
			defs = append(defs, m.Def)
		}
	}
	return defs
}

func (f *Facility) logMCPFailure(ctx context.Context, agent agentline.Agent, t agentline.WebhookTool, err error) {
	attrs := []slog.Attr{slog.Int64("agent_id", agent.ID), slog.Int64("tool_id", t.ID), slog.String("tool", t.Name),
		slog.String("err", err.Error())}
	var te *toolError
	if errors.As(err, &te) && te.cause != nil {
		attrs = append(attrs, slog.String("cause", te.cause.Error()))
	}
	f.logger.LogAttrs(ctx, slog.LevelWarn, "mcp server offers no tools", attrs...)
}

// MCPListing is what the console's "List tools" shows of an MCP source:
// the server's tools with the names the model sees, or why there are none.
type MCPListing struct {
	Tools []MCPToolView `json:"tools"`
	Error *MCPError     `json:"error,omitempty"`
}

// MCPToolView is one tool of an MCP server.
type MCPToolView struct {
	Name        string          `json:"name"`
	ModelName   string          `json:"model_name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// MCPError says why a server gave no tools.
type MCPError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ListMCP connects to an MCP tool's server afresh and lists its allowed
// tools, for the console to try a connection.
func (f *Facility) ListMCP(ctx context.Context, t agentline.WebhookTool) MCPListing {
	e := f.mcp.entry(t)
	e.stale.Store(true)
	lctx, cancel := context.WithTimeout(ctx, 2*MCPListTimeout)
	defer cancel()
	out := MCPListing{Tools: []MCPToolView{}}
	tools, _, err := f.mcpList(lctx, t)
	if err != nil {
		var te *toolError
		if !errors.As(err, &te) {
			te = &toolError{Code: "unreachable", Message: "could not list the MCP server's tools"}
		}
		out.Error = &MCPError{Code: te.Code, Message: te.Message}
		return out
	}
	for _, m := range tools {
		out.Tools = append(out.Tools, MCPToolView{Name: m.Name, ModelName: m.Model, Description: m.Def.Description, InputSchema: m.Def.Parameters})
	}
	return out
}

// resolveMCP finds the MCP source and the server's tool behind a
// model-facing name; nil when the agent has none by that name.
func (f *Facility) resolveMCP(ctx context.Context, agent agentline.Agent, name string) (*agentline.WebhookTool, []mcpTool, error) {
	list, err := f.store.Tools(ctx, agent.ProjectID, agent.ID)
	if err != nil {
		return nil, nil, err
	}
	for i := range list {
		if !isMCPName(list[i], name) {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, MCPListTimeout)
		tools, _, err := f.mcpList(lctx, list[i])
		cancel()
		if err != nil {
			return &list[i], nil, err
		}
		return &list[i], tools, nil
	}
	return nil, nil, nil
}

// callMCP runs a call of a model-facing MCP name: tools/call on the
// source's session, with the webhook tools' timeout and output cap.
func (f *Facility) callMCP(ctx context.Context, agent agentline.Agent, call agentline.ToolCall, label *string) (string, bool, error) {
	t, tools, err := f.resolveMCP(ctx, agent, call.Name)
	switch {
	case t == nil && err == nil:
		return "", false, unknownTool(call.Name)
	case t == nil:
		return "", false, err
	}
	*label = t.Name
	if err != nil {
		return "", false, err
	}
	var target string
	for _, m := range tools {
		if m.Model == call.Name {
			target = m.Name
		}
	}
	if target == "" {
		return "", false, unknownTool(call.Name)
	}
	args, err := decodeArguments(call.Arguments)
	if err != nil {
		return "", false, err
	}
	timeout := time.Duration(t.TimeoutMS) * time.Millisecond
	if timeout <= 0 || timeout > MaxTimeout {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, session, err := f.mcpList(cctx, *t)
	if err != nil {
		return "", false, err
	}
	res, err := session.CallTool(cctx, &mcp.CallToolParams{Name: target, Arguments: args})
	if err != nil {
		return "", false, f.callFailure(ctx, cctx, *t, err, timeout)
	}
	return mcpOutput(res)
}

// callFailure maps a failed tools/call. A protocol error is the server's
// answer; anything else may be a broken session, dropped so the next call
// reconnects.
func (f *Facility) callFailure(parent, call context.Context, t agentline.WebhookTool, err error, timeout time.Duration) error {
	var wire *jsonrpc.Error
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("tool call: %w", parent.Err())
	case errors.As(err, &wire):
		msg, _ := capOutput([]byte(wire.Message), false)
		return &toolError{Code: "mcp_error", Message: "the MCP server refused the call: " + clip(msg, 512)}
	}
	f.mcp.entry(t).close()
	if errors.Is(call.Err(), context.DeadlineExceeded) {
		return &toolError{Code: "timeout", Message: fmt.Sprintf("the MCP server did not answer within %s", timeout)}
	}
	return mcpError("call", err)
}

// mcpOutput renders a tools/call result as the model reads it: its text
// content joined, or its structured content as JSON; a result flagged as
// an error is a tool error carrying that text.
func mcpOutput(res *mcp.CallToolResult) (string, bool, error) {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[image: "+c.MIMEType+"]")
		case *mcp.AudioContent:
			parts = append(parts, "[audio: "+c.MIMEType+"]")
		case *mcp.ResourceLink:
			parts = append(parts, "[resource: "+c.URI+"]")
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if res.IsError {
		msg, _ := capOutput([]byte(text), false)
		return "", false, &toolError{Code: "tool_error", Message: "the MCP tool failed: " + clip(msg, 2048)}
	}
	if text == "" {
		return `{"ok":true}`, false, nil
	}
	out, truncated := capOutput([]byte(text), false)
	return out, truncated, nil
}
