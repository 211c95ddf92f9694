// Package livecall is the phone channel's live call path: the inbound
// webhook that answers a call with TwiML, the admission of the carrier's
// media stream, the run of one call through the relay to the realtime model,
// the writer that keeps a call's log while it goes on, and the registry of
// the calls relayed by this instance. It is apart from number and call
// management because its state lives as long as calls do (goroutines,
// sockets, a drain), while management is request and response; management
// reaches it only through the few registry methods it needs.
package livecall

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/recording"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// Store is what the live call path needs from storage.
type Store interface {
	ProjectOf(ctx context.Context, kind agentline.Kind, id int64) (int64, error)
	// PublishedAgent is what calls run; AgentAtVersion what a call that
	// records its version runs (a test call of a draft).
	PublishedAgent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error)
	AgentAtVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.Agent, error)
	PhoneNumberByE164(ctx context.Context, phoneNumber string) (agentline.PhoneNumber, error)

	AttachCallSID(ctx context.Context, projectID, callID int64, callSID, status string) (agentline.Call, error)
	Call(ctx context.Context, projectID int64, callSID string) (agentline.Call, error)
	CallBySID(ctx context.Context, callSID string) (agentline.Call, error)
	// ApplyCallEvent records a status report; changed follows it in the
	// same transaction.
	ApplyCallEvent(ctx context.Context, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error)
	// RecordInboundCall is ApplyCallEvent for the voice webhook of a call
	// coming in, which is usually new: the agent that answers the number
	// read, take asked whether it takes the call, and the call inserted,
	// in one transaction. Not found when the number has no agent.
	RecordInboundCall(ctx context.Context, e agentline.CallEvent, take func(agentline.Agent) error,
		changed agentline.CallFollowUp) (agentline.Call, agentline.Agent, error)
	CallByStreamRef(ctx context.Context, projectID int64, ref string) (agentline.Call, error)
	AppendCallLog(ctx context.Context, projectID, callID int64, entries []agentline.CallLogEntry) error
	// AdmitStream records the one use of a stream token, good until
	// expires, across every instance on the database (conflict when it was
	// used before), and applies e in the same transaction.
	AdmitStream(ctx context.Context, ref string, expires time.Time, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error)
	// AdmitCallStream is AdmitStream for a call known by its SID, with
	// the call and its agent as the call runs it (the version it
	// records, else the published one) read in the same transaction;
	// admit checks them and gives the event.
	AdmitCallStream(ctx context.Context, callSID, ref string, expires time.Time,
		admit func(agentline.Call, agentline.Agent) (agentline.CallEvent, error), changed agentline.CallFollowUp) (agentline.Call, agentline.Agent, error)
	// OptOutContact puts a campaign contact's number on the project's
	// do-not-call list and marks the contact opted_out, in one write.
	OptOutContact(ctx context.Context, projectID, contactID int64, reason string) (agentline.DoNotCall, error)
}

// Tools runs agents' tool calls (the tool facility).
type Tools interface {
	Definitions(ctx context.Context, agent agentline.Agent) ([]agentline.ToolDefinition, error)
	Execute(ctx context.Context, agent agentline.Agent, call agentline.ToolCall) (agentline.ToolResult, error)
}

// Recordings records the calls of agents with record_calls on
// (recording.Calls).
type Recordings interface {
	// Begin starts recording a call whose stream started at start.
	Begin(start time.Time) (*recording.Recorder, error)
	// Finish closes the recorder, stores the recording and records it.
	Finish(ctx context.Context, projectID, callID int64, r *recording.Recorder) error
}

// Options configure the live call path.
type Options struct {
	Store Store
	// Carrier is nil when no carrier account is configured: calls still
	// run, but cannot be transferred, apologized to or hung up through the
	// carrier's API.
	Carrier carrier.Carrier
	// Secret checks and signs stream tokens (app.Secret).
	Secret string
	// BotHost is the public host the carrier reaches (BOT_HOST).
	BotHost string
	// Signatures checks the carrier's webhooks and stream upgrades.
	Signatures *carrier.Signatures
	// Now is the clock.
	Now func() time.Time

	// Tools runs the agents' tool calls on calls (the tool facility).
	Tools Tools
	// OpenAIBaseURL and OpenAIAPIKey reach OpenAI-kind agents' realtime
	// model, GeminiBaseURL and GeminiAPIKey Gemini-kind agents' Live API,
	// when Credentials is nil.
	OpenAIBaseURL, OpenAIAPIKey string
	GeminiBaseURL, GeminiAPIKey string
	// Credentials chooses, once per call, the base URL and key of the
	// call's project (its own provider account, else the deployment's).
	Credentials Credentials
	// AllowPrivate lets a project's own base URL reach loopback and
	// private addresses (AGENTLINE_ALLOW_PRIVATE_WEBHOOKS); otherwise each
	// address dialed for it is checked by the outgoing address policy.
	AllowPrivate bool
	// MaxCallDuration ends a call that lasts longer.
	MaxCallDuration time.Duration
	// ModelReadyTimeout bounds the wait for the model to take the session.
	ModelReadyTimeout time.Duration
	// Registerer gets the relay's metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
	// Logger gets the relay's log lines.
	Logger *slog.Logger
	// Recordings records calls; nil records none, whatever the agents say.
	Recordings Recordings
	// Tracing, when set (tracing is on), gets a span per call with its
	// turns and tool calls inside; nil traces nothing.
	Tracing trace.TracerProvider
}

// Handler answers the carrier's inbound webhook and media streams, and
// keeps the calls it relays. Its dependencies are private copies of the
// Options it was built from: nothing outside can swap them under calls
// that are running.
type Handler struct {
	store Store
	// carrierAPI is nil without a carrier account (see Options.Carrier).
	carrierAPI carrier.Carrier
	// secret checks and signs stream tokens.
	secret string
	// host is BOT_HOST, the public host the carrier reaches.
	host       string
	signatures *carrier.Signatures
	now        func() time.Time
	// tools may be nil: calls then offer no tools.
	tools             Tools
	creds             Credentials
	allowPrivate      bool
	maxCallDuration   time.Duration
	modelReadyTimeout time.Duration
	// recordings is nil when no call is recorded.
	recordings Recordings

	live    *liveCalls
	metrics *metrics
	voices  *voiceMapper
	// tracer is nil when tracing is off.
	tracer trace.Tracer
}

// New returns the live call path. The caller (package telephony) fills in
// the defaults of every option, so they are decided in one place.
func New(opts Options) *Handler {
	var tracer trace.Tracer
	if opts.Tracing != nil {
		tracer = opts.Tracing.Tracer("github.com/agentline/agentline/internal/telephony")
	}
	return &Handler{
		tracer: tracer, store: opts.Store, carrierAPI: opts.Carrier, secret: opts.Secret, host: opts.BotHost,
		signatures: opts.Signatures, now: opts.Now, tools: opts.Tools,
		creds: credentialsOf(opts), allowPrivate: opts.AllowPrivate,
		maxCallDuration: opts.MaxCallDuration, modelReadyTimeout: opts.ModelReadyTimeout,
		recordings: opts.Recordings, live: &liveCalls{},
		metrics: newMetrics(opts.Registerer), voices: &voiceMapper{log: opts.Logger},
	}
}

// Routes lists the live path's routes: the carrier's inbound webhook and
// the media stream.
func (h *Handler) Routes() []httpx.Route {
	return []httpx.Route{
		h.signatures.Route("/api/telephony/inbound", h.inboundCall),
		{Method: "GET", Pattern: "/api/telephony/stream/{agent_id}", Auth: httpx.StreamToken, Name: httpx.NameOf(h.stream), Handler: httpx.HandlerFunc(h.stream)},
	}
}

// botHost returns BOT_HOST, or not_configured: stream URLs are built from
// it.
func (h *Handler) botHost() (string, error) {
	if h.host == "" {
		return "", agentline.Errorf(agentline.ENotConfigured, "BOT_HOST is not set: the carrier needs a public host name to reach this service")
	}
	return h.host, nil
}

// CheckAgent checks that an agent can take calls: its model is an
// OpenAI-compatible realtime one, whose mu-law audio passes through, or a
// Gemini Live one, whose PCM the relay converts.
func CheckAgent(a agentline.Agent) error {
	switch a.Provider {
	case agentline.ProviderOpenAI, agentline.ProviderGemini:
		return nil
	}
	return &agentline.Error{Code: agentline.EUnsupportedProvider, Field: "agent_id",
		Message: "agent " + a.Name + " runs on a model of provider " + string(a.Provider) + ", which cannot take phone calls: the phone channel needs an OpenAI-compatible realtime model or a Gemini Live one"}
}
