// Package telephony is the phone channel's management side: searching,
// buying and releasing numbers, placing and ending calls, the call records
// the carrier's status callbacks keep, and the API that lists them. These
// are request and response work against the carrier's REST API and the
// store; the calls themselves run in package livecall, which New assembles
// with this side into the one handler the app serves, so that the app wires
// one phone channel.
package telephony

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/livecall"
)

// Store is what the phone channel needs from storage: what the live call
// path needs, and what management adds.
type Store interface {
	livecall.Store

	CreatePhoneNumber(ctx context.Context, n agentline.PhoneNumber) (agentline.PhoneNumber, error)
	PhoneNumbers(ctx context.Context, projectID int64) ([]agentline.PhoneNumber, error)
	PhoneNumber(ctx context.Context, projectID, numberID int64) (agentline.PhoneNumber, error)
	AgentPhoneNumber(ctx context.Context, projectID, agentID int64) (agentline.PhoneNumber, error)
	UpdatePhoneNumber(ctx context.Context, n agentline.PhoneNumber) (agentline.PhoneNumber, error)
	DeletePhoneNumber(ctx context.Context, projectID, numberID int64) error

	ReserveCall(ctx context.Context, c agentline.Call, max int) (agentline.Call, error)
	ReserveDialCall(ctx context.Context, c agentline.Call, max int, dialID int64, interval time.Duration) (agentline.Call, error)
	DeleteCall(ctx context.Context, projectID, callID int64) error
	ProjectOfCall(ctx context.Context, callSID string) (int64, error)
	RecordAnsweredBy(ctx context.Context, projectID int64, callSID, answeredBy string) (agentline.Call, bool, error)
	ApplyCarrierStatus(ctx context.Context, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error)
	Calls(ctx context.Context, projectID int64, f agentline.CallFilter) ([]agentline.Call, error)
	CallLog(ctx context.Context, projectID, callID int64) ([]agentline.CallLogEntry, error)
}

// Options configure the phone channel's handler.
type Options struct {
	Enabled bool // TELEPHONY_ENABLED; when false every route answers 404
	Store   Store
	Auth    *auth.Service
	// Carrier is nil when no carrier account is configured; the routes
	// that need it then answer 503 not_configured.
	Carrier carrier.Carrier
	// Secret signs stream tokens (app.Secret).
	Secret string
	// BotHost is the public host the carrier reaches (BOT_HOST).
	BotHost string
	// Signatures checks the carrier's webhooks; when nil, every webhook is
	// refused.
	Signatures *carrier.Signatures
	// MaxConcurrentCalls caps a project's live calls
	// (AGENTLINE_MAX_CONCURRENT_CALLS).
	MaxConcurrentCalls int
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// Tools runs the agents' tool calls on calls (the tool facility).
	Tools livecall.Tools
	// OpenAIBaseURL and OpenAIAPIKey reach the realtime model
	// (OPENAI_BASE_URL, OPENAI_API_KEY); GeminiBaseURL and GeminiAPIKey
	// Gemini-kind agents' Live API (GEMINI_BASE_URL, GEMINI_API_KEY); both
	// when Credentials is nil.
	OpenAIBaseURL, OpenAIAPIKey string
	GeminiBaseURL, GeminiAPIKey string
	// Credentials chooses each call's base URL and key by its project (a
	// project's own provider account, else the deployment's).
	Credentials livecall.Credentials
	// AllowPrivate lets a project's own base URL reach loopback and
	// private addresses (AGENTLINE_ALLOW_PRIVATE_WEBHOOKS).
	AllowPrivate bool
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
	// Recordings records the calls of agents with record_calls on; nil
	// records none.
	Recordings livecall.Recordings
	// AnsweringMachine hears who answered the calls placed with machine
	// detection; nil: the verdict is only recorded.
	AnsweringMachine AnsweringMachine
	// Tracing, when set (tracing is on), traces each call.
	Tracing trace.TracerProvider
}

// Handler serves the phone channel's management routes, the carrier's
// webhooks and the media streams of calls. Its dependencies are private
// copies of the Options it was built from: nothing outside can swap the
// store or the carrier under a running handler.
type Handler struct {
	// enabled is TELEPHONY_ENABLED: when false every route answers 404.
	enabled bool
	store   Store
	auth    *auth.Service
	// carrierAPI is nil when no carrier account is configured (see
	// Options.Carrier).
	carrierAPI carrier.Carrier
	// secret signs stream tokens.
	secret string
	// host is BOT_HOST, the public host the carrier reaches.
	host       string
	signatures *carrier.Signatures
	// maxCalls caps a project's live calls.
	maxCalls int
	now      func() time.Time
	// live is the live call path, which the app drains and whose calls it
	// ends on shutdown through the Handler.
	live *livecall.Handler
	// calls is what management needs of Live.
	calls liveCalls
	// machine hears machine detection's verdicts; nil when nobody asks.
	machine AnsweringMachine
}

// liveCalls is what call management needs from the calls relayed here:
// whether new calls are taken, and to announce, settle and end them.
type liveCalls interface {
	Draining() bool
	ExpectOutbound(ref string)
	Settle(ref string)
	EndByAPI(callSID string)
	AwaitRecorded(ctx context.Context, callSID string, within time.Duration) bool
}

// New returns the phone channel's handler.
func New(opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Signatures == nil {
		// Without a checker, refuse every webhook rather than trust it.
		opts.Signatures = carrier.NewSignatures("", opts.BotHost, false)
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
	live := livecall.New(livecall.Options{
		Store: opts.Store, Carrier: opts.Carrier, Secret: opts.Secret, BotHost: opts.BotHost,
		Signatures: opts.Signatures, Now: opts.Now, Tools: opts.Tools,
		OpenAIBaseURL: opts.OpenAIBaseURL, OpenAIAPIKey: opts.OpenAIAPIKey,
		GeminiBaseURL: opts.GeminiBaseURL, GeminiAPIKey: opts.GeminiAPIKey,
		Credentials: opts.Credentials, AllowPrivate: opts.AllowPrivate,
		MaxCallDuration: opts.MaxCallDuration, ModelReadyTimeout: opts.ModelReadyTimeout,
		Registerer: opts.Registerer, Logger: opts.Logger, Recordings: opts.Recordings, Tracing: opts.Tracing,
	})
	return &Handler{
		enabled: opts.Enabled, store: opts.Store, auth: opts.Auth, carrierAPI: opts.Carrier,
		secret: opts.Secret, host: opts.BotHost, signatures: opts.Signatures,
		maxCalls: opts.MaxConcurrentCalls, now: opts.Now,
		live: live, calls: live, machine: opts.AnsweringMachine,
	}
}

// Routes lists the phone channel's routes. With telephony disabled, each
// answers 404 saying so.
func (h *Handler) Routes() []httpx.Route {
	user := h.auth.Route
	routes := []httpx.Route{
		user("GET", "/api/projects/{project_id}/telephony/numbers/available", h.availableNumbers),
		user("GET", "/api/projects/{project_id}/telephony/numbers", h.listNumbers),
		user("POST", "/api/projects/{project_id}/telephony/numbers", h.createNumber),
		user("PATCH", "/api/projects/{project_id}/telephony/numbers/{number_id}", h.updateNumber),
		user("DELETE", "/api/projects/{project_id}/telephony/numbers/{number_id}", h.releaseNumber),
		user("POST", "/api/agents/{agent_id}/telephony/outbound", h.outboundCall),
		user("DELETE", "/api/agents/{agent_id}/telephony/calls/{call_sid}", h.endCall),
		user("POST", "/api/agents/{agent_id}/test-calls", h.createTestCall),
		user("GET", "/api/projects/{project_id}/telephony/calls", h.listCalls),
		user("GET", "/api/calls/{call_sid}", h.getCall),
		h.signatures.Route(statusPath, h.statusCallback),
		h.signatures.Route(amdPath, h.amdCallback),
	}
	routes = append(routes, h.live.Routes()...)
	for i := range routes {
		routes[i].Handler = h.whenEnabled(routes[i].Handler)
	}
	return routes
}

// Drain makes this instance take no new calls; see livecall.Handler.Drain.
func (h *Handler) Drain() { h.live.Drain() }

// LiveCalls counts the media streams this instance is handling.
func (h *Handler) LiveCalls() int { return h.live.LiveCalls() }

// WaitCalls waits until no call runs or is awaited here, or ctx ends.
func (h *Handler) WaitCalls(ctx context.Context) error { return h.live.WaitCalls(ctx) }

// EndCalls ends the calls relayed here and waits for their records; see
// livecall.Handler.EndCalls.
func (h *Handler) EndCalls(ctx context.Context) error { return h.live.EndCalls(ctx) }

var errDisabled = agentline.Errorf(agentline.ENotFound, "telephony is disabled on this deployment (set TELEPHONY_ENABLED=true to enable it)")

// whenEnabled is next when telephony is enabled, else a handler that
// answers 404 saying so.
func (h *Handler) whenEnabled(next http.Handler) http.Handler {
	if h.enabled {
		return next
	}
	return httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { return errDisabled })
}

// carrier returns the carrier, or not_configured.
func (h *Handler) carrier() (carrier.Carrier, error) {
	if h.carrierAPI == nil {
		return nil, agentline.Errorf(agentline.ENotConfigured, "no carrier account is configured: set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN")
	}
	return h.carrierAPI, nil
}

// botHost returns BOT_HOST, or not_configured: webhook and stream URLs are
// built from it.
func (h *Handler) botHost() (string, error) {
	if h.host == "" {
		return "", agentline.Errorf(agentline.ENotConfigured, "BOT_HOST is not set: the carrier needs a public host name to reach this service")
	}
	return h.host, nil
}
