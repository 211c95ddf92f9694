// Package telephony is the phone channel's carrier side: number search,
// provisioning and release, outbound calls, hang-ups, call records kept by
// the carrier's status callbacks, TwiML, webhook signatures and the signed
// tokens that admit a media stream. The carrier is Twilio, reached through
// twilio-go behind the small Carrier interface.
package telephony

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
)

// Store is what the phone channel needs from storage.
type Store interface {
	ProjectOf(ctx context.Context, kind agentline.Kind, id int64) (int64, error)
	Agent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error)

	CreatePhoneNumber(ctx context.Context, n agentline.PhoneNumber) (agentline.PhoneNumber, error)
	PhoneNumbers(ctx context.Context, projectID int64) ([]agentline.PhoneNumber, error)
	PhoneNumber(ctx context.Context, projectID, numberID int64) (agentline.PhoneNumber, error)
	PhoneNumberByE164(ctx context.Context, phoneNumber string) (agentline.PhoneNumber, error)
	AgentPhoneNumber(ctx context.Context, projectID, agentID int64) (agentline.PhoneNumber, error)
	UpdatePhoneNumber(ctx context.Context, n agentline.PhoneNumber) (agentline.PhoneNumber, error)
	DeletePhoneNumber(ctx context.Context, projectID, numberID int64) error

	ReserveCall(ctx context.Context, c agentline.Call, max int) (agentline.Call, error)
	AttachCallSID(ctx context.Context, projectID, callID int64, callSID, status string) (agentline.Call, error)
	DeleteCall(ctx context.Context, projectID, callID int64) error
	Call(ctx context.Context, projectID int64, callSID string) (agentline.Call, error)
	ProjectOfCall(ctx context.Context, callSID string) (int64, error)
	Calls(ctx context.Context, projectID int64, f agentline.CallFilter) ([]agentline.Call, error)
	ApplyCallEvent(ctx context.Context, e agentline.CallEvent) (agentline.Call, error)
	CallByStreamRef(ctx context.Context, projectID int64, ref string) (agentline.Call, error)
	CallLog(ctx context.Context, projectID, callID int64) ([]agentline.CallLogEntry, error)
	AppendCallLog(ctx context.Context, projectID, callID int64, entries []agentline.CallLogEntry) error
}

// Options configure the phone channel's handler.
type Options struct {
	Enabled bool // TELEPHONY_ENABLED; when false every route answers 404
	Store   Store
	Auth    *auth.Service
	// Carrier is nil when no carrier account is configured; the routes
	// that need it then answer 503 not_configured.
	Carrier Carrier
	// Secret signs stream tokens (app.Secret).
	Secret string
	// BotHost is the public host the carrier reaches (BOT_HOST).
	BotHost string
	// Signatures checks the carrier's webhooks; when nil, every webhook is
	// refused.
	Signatures *Signatures
	// MaxConcurrentCalls caps a project's live calls
	// (AGENTLINE_MAX_CONCURRENT_CALLS).
	MaxConcurrentCalls int
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// Tools runs the agents' tool calls on calls (the tool facility).
	Tools Tools
	// OpenAIBaseURL and OpenAIAPIKey reach the realtime model
	// (OPENAI_BASE_URL, OPENAI_API_KEY).
	OpenAIBaseURL, OpenAIAPIKey string
	// MaxCallDuration ends a call that lasts longer
	// (AGENTLINE_MAX_CALL_DURATION); 30 minutes when zero.
	MaxCallDuration time.Duration
	// ModelReadyTimeout bounds the wait for the model to take the session
	// (AGENTLINE_MODEL_READY_TIMEOUT); 10 s when zero.
	ModelReadyTimeout time.Duration
	// Registerer gets the relay's metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
	// Logger gets the relay's log lines; slog.Default when nil.
	Logger *slog.Logger
}

// Handler serves the phone channel's management routes, the carrier's
// webhooks and the media streams of calls.
type Handler struct {
	Options
	live    *liveCalls
	metrics *metrics
	voices  *voiceMapper
}

// New returns the phone channel's handler.
func New(opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Signatures == nil {
		// Without a checker, refuse every webhook rather than trust it.
		opts.Signatures = NewSignatures("", opts.BotHost, true)
	}
	if opts.MaxConcurrentCalls <= 0 {
		opts.MaxConcurrentCalls = 10
	}
	if opts.MaxCallDuration <= 0 {
		opts.MaxCallDuration = 30 * time.Minute
	}
	if opts.ModelReadyTimeout <= 0 {
		opts.ModelReadyTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Handler{Options: opts, live: &liveCalls{}, metrics: newMetrics(opts.Registerer), voices: &voiceMapper{log: opts.Logger}}
}

// Routes lists the phone channel's routes. With telephony disabled, each
// answers 404 saying so.
func (h *Handler) Routes() []httpx.Route {
	user := func(method, pattern string, fn httpx.HandlerFunc) httpx.Route {
		r := h.Auth.Route(method, pattern, fn)
		r.Handler = h.enabled(r.Handler)
		return r
	}
	carrier := func(pattern string, fn httpx.HandlerFunc) httpx.Route {
		return httpx.Route{Method: "POST", Pattern: pattern, Auth: httpx.Carrier, Name: httpx.NameOf(fn), Handler: h.enabled(httpx.HandlerFunc(h.Signatures.Check(fn)))}
	}
	return []httpx.Route{
		user("GET", "/api/projects/{project_id}/telephony/numbers/available", h.availableNumbers),
		user("GET", "/api/projects/{project_id}/telephony/numbers", h.listNumbers),
		user("POST", "/api/projects/{project_id}/telephony/numbers", h.provisionNumber),
		user("PATCH", "/api/projects/{project_id}/telephony/numbers/{number_id}", h.updateNumber),
		user("DELETE", "/api/projects/{project_id}/telephony/numbers/{number_id}", h.releaseNumber),
		user("POST", "/api/agents/{agent_id}/telephony/outbound", h.outboundCall),
		user("DELETE", "/api/agents/{agent_id}/telephony/calls/{call_sid}", h.endCall),
		user("GET", "/api/projects/{project_id}/telephony/calls", h.listCalls),
		user("GET", "/api/calls/{call_sid}", h.getCall),
		carrier("/api/telephony/status", h.statusCallback),
		carrier("/api/telephony/inbound", h.inboundCall),
		{Method: "GET", Pattern: "/api/telephony/stream/{agent_id}", Auth: httpx.StreamToken, Name: httpx.NameOf(h.stream), Handler: h.enabled(httpx.HandlerFunc(h.stream))},
	}
}

var errDisabled = agentline.Errorf(agentline.ENotFound, "telephony is disabled on this deployment (set TELEPHONY_ENABLED=true to enable it)")

func (h *Handler) enabled(next http.Handler) http.Handler {
	if h.Enabled {
		return next
	}
	return httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { return errDisabled })
}

// carrier returns the carrier, or not_configured.
func (h *Handler) carrier() (Carrier, error) {
	if h.Carrier == nil {
		return nil, agentline.Errorf(agentline.ENotConfigured, "no carrier account is configured: set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN")
	}
	return h.Carrier, nil
}

// botHost returns BOT_HOST, or not_configured: webhook and stream URLs are
// built from it.
func (h *Handler) botHost() (string, error) {
	if h.BotHost == "" {
		return "", agentline.Errorf(agentline.ENotConfigured, "BOT_HOST is not set: the carrier needs a public host name to reach this service")
	}
	return h.BotHost, nil
}

// callAgent checks that an agent can take calls: only the OpenAI-compatible
// realtime kind speaks the carrier's mu-law audio natively.
func callAgent(a agentline.Agent) error {
	if a.Provider != agentline.ProviderOpenAI {
		return &agentline.Error{Code: agentline.EUnsupportedProvider, Field: "agent_id",
			Message: "agent " + a.Name + " runs on a Gemini-compatible model, which cannot take phone calls: the phone channel needs an OpenAI-compatible realtime model (gpt-realtime*)"}
	}
	return nil
}
