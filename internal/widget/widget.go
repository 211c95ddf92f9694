// Package widget is the website channel: channels and their one public key
// (management routes under /api), and the public widget API under
// /widget/v1 that a widget or a custom client calls with X-API-Key. It
// checks keys (cached, so the hot path reads no database), origins, CORS and
// per-key rate limits, mints provider tokens for sessions, runs tool calls
// through the tool facility, and stores sessions and their events for the
// sessions and analytics views.
package widget

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/provider"
	"github.com/agentline/agentline/internal/ratelimit"
	"github.com/prometheus/client_golang/prometheus"
)

// Store is what the widget channel needs from storage.
type Store interface {
	Project(ctx context.Context, projectID int64) (agentline.Project, error)
	Agent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error)
	// PublishedAgent is what a channel's sessions run; AgentAtVersion
	// what a console test runs (0: the latest draft).
	PublishedAgent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error)
	AgentAtVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.Agent, error)
	// Campaign checks that the campaign a form names is the project's.
	Campaign(ctx context.Context, projectID, id int64) (agentline.Campaign, error)

	CreateChannel(ctx context.Context, c agentline.Channel) (agentline.Channel, error)
	Channels(ctx context.Context, projectID int64) ([]agentline.Channel, error)
	Channel(ctx context.Context, projectID, channelID int64) (agentline.Channel, error)
	UpdateChannel(ctx context.Context, c agentline.Channel) (agentline.Channel, error)
	DeleteChannel(ctx context.Context, projectID, channelID int64) error

	SetWidgetKey(ctx context.Context, projectID, channelID int64, hash, prefix string, change func(*agentline.WidgetKey) error) (agentline.WidgetKey, error)
	WidgetKey(ctx context.Context, projectID, channelID int64) (agentline.WidgetKey, error)
	WidgetKeyByHash(ctx context.Context, hash string) (agentline.WidgetKey, error)
	UpdateWidgetKey(ctx context.Context, k agentline.WidgetKey) (agentline.WidgetKey, error)
	DeleteWidgetKey(ctx context.Context, projectID, channelID int64) error
	TouchWidgetKey(ctx context.Context, keyID int64, at time.Time) error

	CreateWidgetSession(ctx context.Context, s agentline.WidgetSession, started agentline.ConversationFollowUp) (agentline.WidgetSession, error)
	WidgetSession(ctx context.Context, projectID int64, id string) (agentline.WidgetSession, error)
	StartWidgetSession(ctx context.Context, s agentline.WidgetSession, started agentline.ConversationFollowUp) (agentline.WidgetSession, error)
	AddSessionEvents(ctx context.Context, projectID int64, sessionID string, events []agentline.SessionEvent, ended agentline.ConversationFollowUp) error
	WidgetSessions(ctx context.Context, projectID int64, f agentline.SessionFilter) ([]agentline.SessionWithEvents, error)
	SessionAnalytics(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.AnalyticsRow, error)
	// ConversationStats and LeadStats feed the cross-channel analytics.
	ConversationStats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.ConversationStat, error)
	TurnLatencies(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.LatencySample, error)
	LeadStats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.LeadStat, error)
	// CampaignStats sums each campaign's dials in the range.
	CampaignStats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.CampaignStat, error)
	// VersionStats compares agent versions' conversations in the range.
	VersionStats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.VersionStat, error)
	// LeadBySession finds the form lead a session was created for, whose
	// answers become the agent's context.
	LeadBySession(ctx context.Context, projectID int64, sessionID string) (agentline.Lead, error)
}

// Tools is the tool facility: the tools an agent offers and running them.
type Tools interface {
	Definitions(ctx context.Context, agent agentline.Agent) ([]agentline.ToolDefinition, error)
	Execute(ctx context.Context, agent agentline.Agent, call agentline.ToolCall) (agentline.ToolResult, error)
}

// Options configures a Handler.
type Options struct {
	// Registerer gets agentline_turn_latency_seconds{channel="widget"};
	// nil keeps it unregistered.
	Registerer prometheus.Registerer
	Store      Store
	Auth       *auth.Service
	Provider   *provider.Client
	Limiter    ratelimit.Limiter
	// Tools may be nil: sessions then offer no tools and tools/execute
	// answers not_configured.
	Tools Tools
	// CacheTTL is how long a key lookup or a config answer is served from
	// memory; other instances see key and channel changes within it.
	// Default 3s.
	CacheTTL time.Duration
	// PublicURL is AGENTLINE_PUBLIC_URL, the base URL in snippets; empty:
	// the URL a request came to.
	PublicURL string
	// AllowPrivateWebhooks lets a form's notify_url name an internal
	// address (AGENTLINE_ALLOW_PRIVATE_WEBHOOKS; see internal/egress).
	AllowPrivateWebhooks bool
}

// Handler serves the channel and key management routes and the public
// widget API.
type Handler struct {
	turnLatency prometheus.Histogram // of the SDK's turn_latency reports
	store       Store
	auth        *auth.Service
	provider    *provider.Client
	limiter     ratelimit.Limiter
	tools       Tools
	keys        *keyCache
	configs     *configCache
	touch       *toucher
	now         func() time.Time
	// draining refuses new sessions while the instance shuts down.
	draining atomic.Bool
	// publicURL is the base URL of snippets, without a trailing slash;
	// see Options.PublicURL.
	publicURL string
	// allowPrivate is Options.AllowPrivateWebhooks.
	allowPrivate bool
}

// New returns the widget channel's handler.
func New(o Options) *Handler {
	if o.CacheTTL <= 0 {
		o.CacheTTL = 3 * time.Second
	}
	h := &Handler{store: o.Store, auth: o.Auth, provider: o.Provider, limiter: o.Limiter, tools: o.Tools, now: time.Now,
		publicURL: strings.TrimRight(o.PublicURL, "/"), allowPrivate: o.AllowPrivateWebhooks}
	// The phone relay registers the same name with channel "phone".
	h.turnLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "agentline_turn_latency_seconds", Help: "Time from the end of the caller's or visitor's speech to the first audio of the agent's answer.",
		ConstLabels: prometheus.Labels{"channel": "widget"}, Buckets: agentline.TurnLatencyBuckets(),
	})
	if o.Registerer != nil {
		o.Registerer.MustRegister(h.turnLatency)
	}
	h.keys = newKeyCache(o.Store.WidgetKeyByHash, o.CacheTTL)
	h.configs = newConfigCache(h.buildConfig, o.CacheTTL)
	h.touch = newToucher(o.Store.TouchWidgetKey, time.Minute)
	return h
}

// Routes lists the routes of this package.
func (h *Handler) Routes() []httpx.Route {
	m := h.auth.Route
	p := func(method, pattern string, fn publicFunc) httpx.Route {
		return httpx.Route{Method: method, Pattern: pattern, Auth: httpx.WidgetKey, Name: httpx.NameOf(fn), Handler: h.public(fn)}
	}
	pre := func(pattern, methods string) httpx.Route {
		return httpx.Route{Method: "OPTIONS", Pattern: pattern, Auth: httpx.Preflight, Name: "widget.preflight", Handler: preflight(methods)}
	}
	embed := func(pattern string) httpx.Route {
		return httpx.Route{Method: "GET", Pattern: pattern, Auth: httpx.WidgetKey, Name: httpx.NameOf(h.embed), Handler: http.HandlerFunc(h.embed)}
	}
	return []httpx.Route{
		m("GET", "/api/projects/{project_id}/channels", h.listChannels),
		m("POST", "/api/projects/{project_id}/channels", h.createChannel),
		m("GET", "/api/channels/{channel_id}", h.getChannel),
		m("PATCH", "/api/channels/{channel_id}", h.updateChannel),
		m("DELETE", "/api/channels/{channel_id}", h.deleteChannel),

		m("POST", "/api/channels/{channel_id}/key", h.createKey),
		m("GET", "/api/channels/{channel_id}/key", h.getKey),
		m("PATCH", "/api/channels/{channel_id}/key", h.updateKey),
		m("DELETE", "/api/channels/{channel_id}/key", h.deleteKey),

		m("GET", "/api/projects/{project_id}/sessions", h.listSessions),
		m("GET", "/api/projects/{project_id}/analytics", h.analytics),
		m("GET", "/api/projects/{project_id}/analytics.csv", h.analyticsCSV),

		p("GET", "/widget/v1/config", h.config),
		p("POST", "/widget/v1/session", h.createSession),
		p("POST", "/widget/v1/tools/execute", h.executeTool),
		p("POST", "/widget/v1/analytics", h.reportEvents),
		pre("/widget/v1/config", "GET"),
		pre("/widget/v1/session", "POST"),
		pre("/widget/v1/tools/execute", "POST"),
		pre("/widget/v1/analytics", "POST"),

		m("GET", "/api/channels/{channel_id}/snippets", h.getSnippets),
		embed("/api/channels/voice/embed/{channel_id}"),
		embed("/api/channels/form/embed-widget/{channel_id}"),
	}
}

// Drain makes POST /widget/v1/session answer 503 unavailable from now on,
// so that visitors start their conversations on another instance; the rest
// of the widget API keeps serving sessions already running.
func (h *Handler) Drain() { h.draining.Store(true) }

// Shutdown ends the handler's background work, the writes that record
// keys' last use: requests after it record none, and those in flight get
// until ctx ends, then are cancelled. When it returns no goroutine of the
// handler runs, so the store can be closed under it. A second call returns
// at once.
func (h *Handler) Shutdown(ctx context.Context) error {
	if !h.touch.stop(ctx) {
		return fmt.Errorf("widget key uses in flight were cancelled: %w", context.Cause(ctx))
	}
	return nil
}

var errDraining = &agentline.Error{Code: agentline.EUnavailable, RetryAfter: 1,
	Message: "this instance is shutting down and starts no new sessions; retry, and another instance will take it"}

// authorizeChannel authorizes perm on the project owning the channel of
// the path and returns both ids (see auth.Service.AuthorizePath).
func (h *Handler) authorizeChannel(r *http.Request, perm agentline.Permission) (channelID, projectID int64, err error) {
	return h.auth.AuthorizePath(r, "channel_id", agentline.KindChannel, perm)
}

// forget drops what this instance caches about a channel, after a change.
func (h *Handler) forget(channelID int64) {
	h.keys.forgetChannel(channelID)
	h.configs.forget(channelID)
}
