// Package mcpserver is agentline as an MCP server: POST /mcp (streamable
// HTTP, through the official Go SDK) offers tools that build and inspect a
// project's agents to coding assistants. Only API keys may call it, and
// each tool is a thin adapter over one management API route, served in
// process with the caller's key: the key's project and role bound every
// tool exactly as they bound the key's own API requests.
package mcpserver

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
)

// Path is where the MCP server answers.
const Path = "/mcp"

// auditLog is where every tool call is recorded, with the key as its
// actor.
type auditLog interface {
	AppendAudit(ctx context.Context, e agentline.AuditEntry) error
}

// Options are what the server is made of.
type Options struct {
	// Auth authenticates the API key of each request to /mcp.
	Auth *auth.Service
	// API serves the management API's routes (without the edge, which the
	// /mcp request already passed): each tool call is one request to it.
	API http.Handler
	// OpenAPI is the management API's OpenAPI document, which the tools'
	// input schemas are taken from; nil is agentline's own
	// (docs/openapi.yaml), parsed once in a process.
	OpenAPI []byte
	// Audit records every tool call; nil records none.
	Audit auditLog
	// Version is agentline's, told to clients when they connect; empty is
	// the module's version from the build, else "dev".
	Version string
	Logger  *slog.Logger
	// Now is the clock of audit entries; nil is time.Now.
	Now func() time.Time
	// Registerer gets agentline_mcp_tool_calls_total{tool,status}: tool
	// calls pass the edge once, as POST /mcp, so the edge's metrics count
	// none of their API requests. Nil registers nothing.
	Registerer prometheus.Registerer
}

// Server is the MCP server.
type Server struct {
	auth    *auth.Service
	api     http.Handler
	audit   auditLog
	logger  *slog.Logger
	now     func() time.Time
	handler http.Handler
	calls   *prometheus.CounterVec // nil without a Registerer
}

// New builds the tools from the API's OpenAPI document; a tool whose
// operation the document lacks is an error, so the server never offers a
// tool it cannot describe.
func New(o Options) (*Server, error) {
	parse := ownDoc
	if o.OpenAPI != nil {
		parse = func() (apiDoc, error) { return parseDoc(o.OpenAPI) }
	}
	doc, err := parse()
	if err != nil {
		return nil, err
	}
	s := &Server{auth: o.Auth, api: o.API, audit: o.Audit, logger: o.Logger, now: o.Now}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if o.Registerer != nil {
		s.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentline_mcp_tool_calls_total",
			Help: "MCP tool calls by tool and the status of the API's answer.",
		}, []string{"tool", "status"})
		o.Registerer.MustRegister(s.calls)
	}
	if o.Version == "" {
		o.Version = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			o.Version = bi.Main.Version
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentline", Title: "agentline", Version: o.Version}, &mcp.ServerOptions{
		Instructions: "agentline puts AI voice agents on websites, forms and phone calls. These tools build and inspect " +
			"the agents of one project: the project of the API key you connected with, with the key's role " +
			"(a viewer key reads, an editor or owner key also creates and changes). Errors carry the API's code and message.",
		Logger: s.logger,
	})
	for _, t := range tools {
		op, err := doc.operation(t.method, t.path, keyProject)
		if err != nil {
			return nil, err
		}
		srv.AddTool(&mcp.Tool{
			Name: t.name, Title: t.title, Description: t.description, InputSchema: op.schema,
			Annotations: annotations(t),
		}, s.handle(t, op))
	}
	s.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		// Stateless: any instance answers any request (there is no
		// session to find), and the tools never call back the client.
		Stateless:    true,
		JSONResponse: true,
		// The SDK refuses requests that reach a loopback listener with
		// another Host, against DNS rebinding of a local server; agentline
		// often runs behind a proxy on the same host, and every request
		// here must carry an API key, which a rebinding page cannot have.
		DisableLocalhostProtection: true,
		Logger:                     s.logger,
	})
	return s, nil
}

// annotations tell clients which tools only read, so that they may run
// those without asking.
func annotations(t tool) *mcp.ToolAnnotations {
	no := false
	return &mcp.ToolAnnotations{
		Title:           t.title,
		ReadOnlyHint:    t.method == http.MethodGet,
		DestructiveHint: &no,
		IdempotentHint:  t.method == http.MethodGet || t.method == http.MethodPatch,
		OpenWorldHint:   &no,
	}
}

// Routes lists the MCP server's route: POST only, since the server keeps
// no sessions (GET answers 405, which clients take as "no stream").
func (s *Server) Routes() []httpx.Route {
	return []httpx.Route{s.auth.KeyRoute(http.MethodPost, Path, s.serve)}
}

// serve runs the SDK's handler for a request whose key KeyRoute
// authenticated, with the key as the actor of what it does.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	k, _ := auth.APIKeyFrom(r.Context())
	origin := agentline.AuditOrigin{
		Actor:     agentline.Actor{Kind: agentline.ActorAPIKey, ID: k.ID, KeyPrefix: k.Prefix},
		RequestID: httpx.RequestID(r.Context()),
	}
	if a, ok := httpx.ClientAddr(r.Context()); ok {
		origin.ClientIP = a.String()
	} else if a, ok := httpx.PeerAddr(r); ok {
		origin.ClientIP = a.String()
	}
	ctx := agentline.WithAuditOrigin(r.Context(), origin)
	ctx = context.WithValue(ctx, outerKey{}, outer{host: r.Host, tls: r.TLS, remoteAddr: r.RemoteAddr})
	s.handler.ServeHTTP(w, r.WithContext(ctx))
}

// outer is what the tools' API requests take from the /mcp request they
// are made in: where it came to and from, which the API's answers may use
// (a snippet's URLs name the host the request came to).
type outer struct {
	host       string
	tls        *tls.ConnectionState
	remoteAddr string
}

type outerKey struct{}
