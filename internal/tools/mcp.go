package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
)

// Limits of MCP sources.
const (
	// MCPListTimeout bounds connecting to a server and listing its tools at
	// the start of a session: a slow server costs the session its tools,
	// not its start.
	MCPListTimeout = 2 * time.Second
	// mcpListTTL is how long a listing is used before it is asked again;
	// a tools/list_changed notification ends it sooner.
	mcpListTTL = 60 * time.Second
	// mcpMaxSessions bounds the open MCP sessions of one process.
	mcpMaxSessions = 256
	// mcpIdle is how long a session no conversation used stays open: a
	// deleted tool's session ends within it.
	mcpIdle = 10 * time.Minute
	// mcpMaxTools bounds the tools taken from one server.
	mcpMaxTools = 128
	// mcpNameSep joins the tool's name and the server's tool name into the
	// name the model sees.
	mcpNameSep = "__"
)

// mcpTool is one tool of an MCP server as offered to the model.
type mcpTool struct {
	Model string // the name the model calls: <tool name>__<server's name>, sanitized
	Name  string // the server's name
	Def   agentline.ToolDefinition
}

// mcpEntry is the open session to one MCP tool's server and its last
// listing. key changes when the tool is edited, which reconnects.
type mcpEntry struct {
	key     string
	stale   atomic.Bool // set by notifications/tools/list_changed
	mu      sync.Mutex  // held while connecting and listing
	session *mcp.ClientSession
	tools   []mcpTool
	listed  time.Time
	err     error
	used    time.Time
}

// mcpPool holds the MCP sessions of a Facility, one per MCP tool.
type mcpPool struct {
	mu      sync.Mutex
	entries map[int64]*mcpEntry
}

func entryKey(t agentline.WebhookTool) string {
	return t.URL + "\x00" + t.UpdatedAt.UTC().Format(time.RFC3339Nano) + "\x00" + t.SealedHeaders
}

// entry returns the pool's entry of t, replacing one of an older version
// of the tool (closing its session) and, past mcpMaxSessions, the least
// recently used.
func (p *mcpPool) entry(t agentline.WebhookTool) *mcpEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.entries == nil {
		p.entries = map[int64]*mcpEntry{}
	}
	for id, c := range p.entries {
		if id != t.ID && time.Since(c.used) > mcpIdle {
			delete(p.entries, id)
			go c.close()
		}
	}
	e := p.entries[t.ID]
	if e != nil && e.key == entryKey(t) {
		e.used = time.Now()
		return e
	}
	if e != nil {
		go e.close()
	}
	if e == nil && len(p.entries) >= mcpMaxSessions {
		var oldID int64
		var old *mcpEntry
		for id, c := range p.entries {
			if old == nil || c.used.Before(old.used) {
				oldID, old = id, c
			}
		}
		delete(p.entries, oldID)
		go old.close()
	}
	e = &mcpEntry{key: entryKey(t), used: time.Now()}
	p.entries[t.ID] = e
	return e
}

// Close ends every open MCP session.
func (p *mcpPool) Close() error {
	p.mu.Lock()
	entries := p.entries
	p.entries = nil
	p.mu.Unlock()
	for _, e := range entries {
		e.close()
	}
	return nil
}

func (e *mcpEntry) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.drop()
}

// drop closes the session; e.mu must be held.
func (e *mcpEntry) drop() {
	if e.session != nil {
		_ = e.session.Close()
		e.session = nil
	}
	e.listed = time.Time{}
}

// Close ends the facility's MCP sessions (at shutdown).
func (f *Facility) Close() error { return f.mcp.Close() }

// mcpList returns the allowed tools of an MCP tool's server, from the
// cache while it is fresh, otherwise connecting and listing within ctx.
// The session stays open for the calls that follow.
func (f *Facility) mcpList(ctx context.Context, t agentline.WebhookTool) ([]mcpTool, *mcp.ClientSession, error) {
	e := f.mcp.entry(t)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.session != nil && !e.listed.IsZero() && time.Since(e.listed) < mcpListTTL && !e.stale.Load() {
		return e.tools, e.session, nil
	}
	e.stale.Store(false)
	list, err := f.mcpRefresh(ctx, e, t)
	e.err = err
	if err != nil {
		e.drop()
		return nil, nil, err
	}
	e.tools, e.listed = list, time.Now()
	return list, e.session, nil
}

// mcpRefresh connects when e has no session and lists the server's tools.
func (f *Facility) mcpRefresh(ctx context.Context, e *mcpEntry, t agentline.WebhookTool) ([]mcpTool, error) {
	if e.session == nil {
		s, err := f.mcpConnect(ctx, e, t)
		if err != nil {
			return nil, err
		}
		e.session = s
	}
	var all []*mcp.Tool
	for tool, err := range e.session.Tools(ctx, nil) {
		if err != nil {
			return nil, mcpError("list the tools of", err)
		}
		if all = append(all, tool); len(all) >= 4*mcpMaxTools {
			break
		}
	}
	return offered(t, all), nil
}

// mcpConnect opens a streamable HTTP session to t's server through the
// facility's guarded client, with t's headers on every request to the
// server's own host.
func (f *Facility) mcpConnect(ctx context.Context, e *mcpEntry, t agentline.WebhookTool) (*mcp.ClientSession, error) {
	if err := egress.CheckURL("url", t.URL, f.allowPrivate); err != nil {
		return nil, &toolError{Code: "blocked_address", Message: "the MCP server's URL leads to an address tools may not reach", cause: err}
	}
	headers, err := f.mcpHeaders(t)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, &toolError{Code: "invalid_tool", Message: "the MCP server's URL cannot be used", cause: err}
	}
	client := &http.Client{
		Transport:     headerTransport{base: f.client.Transport, host: u.Host, headers: headers},
		CheckRedirect: f.client.CheckRedirect,
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agentline", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { e.stale.Store(true) },
	})
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: client, MaxRetries: 1}, nil)
	if err != nil {
		return nil, mcpError("connect to", err)
	}
	return s, nil
}

// mcpHeaders opens an MCP tool's sealed headers.
func (f *Facility) mcpHeaders(t agentline.WebhookTool) (map[string]string, error) {
	if t.SealedHeaders == "" {
		return nil, nil
	}
	if f.sealer == nil {
		return nil, &toolError{Code: "invalid_tool", Message: "the MCP server's headers cannot be read on this server"}
	}
	plain, err := f.sealer.Open(t.SealedHeaders, agentline.MCPHeadersContext(t.ProjectID, t.AgentID, t.Name))
	if err != nil {
		return nil, &toolError{Code: "invalid_tool", Message: "the MCP server's headers cannot be read", cause: err}
	}
	var h map[string]string
	if err := json.Unmarshal([]byte(plain), &h); err != nil {
		return nil, &toolError{Code: "invalid_tool", Message: "the MCP server's headers cannot be read"}
	}
	return h, nil
}

// headerTransport adds an MCP tool's headers to the requests to its own
// host only, so a redirect elsewhere does not carry its token.
type headerTransport struct {
	base    http.RoundTripper
	host    string
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 && r.URL.Host == h.host {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// mcpError is a failure to reach or use an MCP server, as the model and
// the console read it; the cause, without URLs, goes to the log.
func mcpError(what string, err error) error {
	var te *toolError
	var blocked *egress.BlockedError
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &blocked):
		return &toolError{Code: "blocked_address", Message: "the MCP server's URL leads to an address tools may not reach: " + blocked.What}
	case errors.Is(err, context.DeadlineExceeded):
		return &toolError{Code: "timeout", Message: fmt.Sprintf("could not %s the MCP server in time", what), cause: logNetError(err)}
	}
	return &toolError{Code: "unreachable", Message: fmt.Sprintf("could not %s the MCP server", what), cause: logNetError(err)}
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// offered keeps the allowed tools of a listing and names them for the
// model: names must match ^[a-zA-Z0-9_-]{1,64}$, so the server's name is
// sanitized and cut; a name that collides after that is left out.
func offered(t agentline.WebhookTool, all []*mcp.Tool) []mcpTool {
	allowed := map[string]bool{}
	for _, n := range t.AllowedTools {
		allowed[n] = true
	}
	seen := map[string]bool{}
	out := []mcpTool{}
	for _, tool := range all {
		if tool == nil || (len(allowed) > 0 && !allowed[tool.Name]) || len(out) >= mcpMaxTools {
			continue
		}
		model := t.Name + mcpNameSep + unsafeName.ReplaceAllString(tool.Name, "_")
		if len(model) > 64 {
			model = model[:64]
		}
		if seen[model] {
			continue
		}
		seen[model] = true
		out = append(out, mcpTool{Model: model, Name: tool.Name, Def: agentline.ToolDefinition{
			Name: model, Description: clip(tool.Description, maxDescription), Parameters: inputSchema(tool.InputSchema),
		}})
	}
	return out
}

// inputSchema is a server's input schema as the providers take it: a JSON
// object of type object (anything else becomes an empty object schema).
func inputSchema(s any) json.RawMessage {
	empty := json.RawMessage(`{"type":"object","properties":{}}`)
	b, err := json.Marshal(s)
	if err != nil || len(b) > maxSchemaBytes {
		return empty
	}
	var obj map[string]any
	if json.Unmarshal(b, &obj) != nil || obj["type"] != "object" {
		return empty
	}
	delete(obj, "$schema")
	if b, err = json.Marshal(obj); err != nil {
		return empty
	}
	return b
}

// isMCPName tells whether a model-facing name belongs to MCP tool t.
func isMCPName(t agentline.WebhookTool, name string) bool {
	return t.Type == agentline.ToolMCP && strings.HasPrefix(name, t.Name+mcpNameSep)
}
