// Package mcptest runs an MCP server built with the official Go SDK on
// loopback, over streamable HTTP, for the tests of MCP tool sources in
// every package: tools that answer, fail, or lose the connection mid-call,
// and an optional bearer token the server requires.
package mcptest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a running MCP server.
type Server struct {
	*httptest.Server
	MCP *mcp.Server
	// Calls counts tools/call requests that reached a tool.
	Calls atomic.Int64
	// SeenAuth is the last Authorization header the server received.
	SeenAuth atomic.Value
}

// LookupArgs are the arguments of the lookup_order tool.
type LookupArgs struct {
	OrderID string `json:"order_id" jsonschema:"the order number"`
}

// New starts a server with the tools lookup_order (answers "order <id>:
// shipped"), always_fails (a tool error), hang_up (the connection drops
// mid-call) and extra_tool. With token set, requests without
// "Authorization: Bearer <token>" get 401.
func New(t testing.TB, token string) *Server {
	t.Helper()
	s := &Server{MCP: mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, nil)}
	mcp.AddTool(s.MCP, &mcp.Tool{Name: "lookup_order", Description: "Look up an order's status."},
		func(_ context.Context, _ *mcp.CallToolRequest, in LookupArgs) (*mcp.CallToolResult, any, error) {
			s.Calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "order " + in.OrderID + ": shipped"}}}, nil, nil
		})
	mcp.AddTool(s.MCP, &mcp.Tool{Name: "always_fails", Description: "Fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			s.Calls.Add(1)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the warehouse is offline"}}}, nil, nil
		})
	mcp.AddTool(s.MCP, &mcp.Tool{Name: "hang_up", Description: "Drops the connection."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	mcp.AddTool(s.MCP, &mcp.Tool{Name: "extra_tool", Description: "Not allowed in most tests."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "extra"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP }, nil)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.SeenAuth.Store(r.Header.Get("Authorization"))
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && dropsMidCall(r) {
			// The server dies during the call: the connection closes with
			// no answer.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					_ = c.Close()
				}
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		// Clients' standalone event streams stay open: cut them, or Close
		// waits for them.
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// URL is the server's MCP endpoint.
func (s *Server) URL() string { return s.Server.URL + "/mcp" }

// dropsMidCall reads the body and tells whether it calls hang_up, leaving
// the body readable again.
func dropsMidCall(r *http.Request) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return strings.Contains(string(b), `"tools/call"`) && strings.Contains(string(b), `"hang_up"`)
}
