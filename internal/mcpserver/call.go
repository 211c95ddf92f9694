package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
)

// handle is t's tool handler: it records the call, turns the arguments
// into t's API request, serves it with the caller's key through the API's
// own routes, and answers what the API answered. An API error is a tool
// error carrying the API's JSON error (code and message), so that the
// model reads what a person would.
func (s *Server) handle(t tool, op operation) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		k, ok := auth.APIKeyFrom(ctx)
		if !ok || req.Extra == nil {
			// KeyRoute puts the key there; without it nothing may run.
			return nil, errors.New("mcp: tool call without an API key")
		}
		rec, failed := newRecorder(), (&http.Request{}).WithContext(ctx)
		if err := s.record(ctx, k, t.name); err != nil {
			httpx.WriteError(rec, failed, &agentline.Error{Code: agentline.EUnavailable,
				Message: "the call could not be recorded in the audit log, so it was not made; try again", Err: err})
			return rec.result(), nil
		}
		r, err := apiRequest(ctx, t, op, k.ProjectID, req.Params.Arguments)
		if err != nil {
			httpx.WriteError(rec, failed, err)
			return rec.result(), nil
		}
		r.Header.Set("Authorization", req.Extra.Header.Get("Authorization"))
		s.api.ServeHTTP(rec, r)
		httpx.Logger(ctx).Info("mcp tool call", "tool", t.name, "status", rec.status)
		if s.calls != nil {
			s.calls.WithLabelValues(t.name, strconv.Itoa(rec.status)).Inc()
		}
		return rec.result(), nil
	}
}

// record writes the call to the audit log, the key as its actor (the
// origin serve put on ctx).
func (s *Server) record(ctx context.Context, k agentline.APIKey, name string) error {
	if s.audit == nil {
		return nil
	}
	o := agentline.AuditOriginFrom(ctx)
	return s.audit.AppendAudit(ctx, agentline.AuditEntry{
		At: s.now().UTC(), Actor: o.Actor, Action: "mcp.call",
		Resource:  agentline.AuditResource{Kind: "mcp_tool", ID: name},
		ProjectID: k.ProjectID, ClientIP: o.ClientIP, RequestID: o.RequestID,
	})
}

// apiRequest builds t's request from the call's arguments: path
// parameters into the path (the project's is the key's), query parameters
// into the query, the rest as the JSON body, which the API decodes
// strictly. An argument that is none of these is refused here for a
// request without a body, as the API refuses it in one.
func apiRequest(ctx context.Context, t tool, op operation, projectID int64, raw json.RawMessage) (*http.Request, error) {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, agentline.Invalid("", "arguments must be a JSON object")
		}
	}
	path := strings.ReplaceAll(t.path, "{"+keyProject+"}", strconv.FormatInt(projectID, 10))
	for _, name := range op.pathParams {
		v, ok := args[name]
		if !ok || string(v) == "null" {
			return nil, agentline.Invalid(name, "%s is required", name)
		}
		id := scalar(v)
		if id == "" || id == "." || id == ".." || strings.Contains(id, "/") {
			// Escaped, it would still be cleaned out of the path.
			return nil, agentline.Invalid(name, "%s %q is no id", name, id)
		}
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(id))
		delete(args, name)
	}
	q := url.Values{}
	for _, name := range op.queryParams {
		if v, ok := args[name]; ok && string(v) != "null" {
			q.Set(name, scalar(v))
		}
		delete(args, name)
	}
	var body []byte
	if op.body {
		var err error
		if body, err = json.Marshal(args); err != nil {
			return nil, err
		}
	} else if len(args) > 0 {
		names := slices.Sorted(maps.Keys(args))
		return nil, agentline.Invalid(names[0], "unknown field %q", names[0])
	}
	target := path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	r, err := http.NewRequestWithContext(ctx, t.method, target, bytes.NewReader(body))
	if err != nil {
		return nil, agentline.Invalid("", "arguments make no valid request: %v", err)
	}
	r.Header.Set("Content-Type", "application/json")
	if o, ok := ctx.Value(outerKey{}).(outer); ok {
		r.Host, r.TLS, r.RemoteAddr = o.host, o.tls, o.remoteAddr
	}
	return r, nil
}

// scalar is an argument as it goes in a path or query: a string's text,
// anything else as written.
func scalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(v))
}

// recorder keeps the API's answer to one tool call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, status: http.StatusOK} }

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int)      { r.status = status }

// result is the answer as a tool result: the JSON as text and as
// structured content, which must be an object, so a list is
// {"items": [...], "next_cursor": "..."} (the cursor from X-Next-Cursor);
// any status but 2xx makes it a tool error.
func (r *recorder) result() *mcp.CallToolResult {
	body := bytes.TrimSpace(r.body.Bytes())
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	obj, verbatim := map[string]any{"status": r.status, "text": string(body)}, false
	if dec.Decode(&v) == nil {
		if m, ok := v.(map[string]any); ok {
			obj, verbatim = m, true
		} else {
			key := "value"
			if _, ok := v.([]any); ok {
				key = "items"
			}
			obj = map[string]any{key: v}
			if c := r.header.Get("X-Next-Cursor"); c != "" {
				obj["next_cursor"] = c
			}
		}
	}
	text := body
	if !verbatim {
		text, _ = json.Marshal(obj)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: obj,
		IsError:           r.status < 200 || r.status > 299,
	}
}
