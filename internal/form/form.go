// Package form is the web form channel: a public form page (GET
// /api/channels/form/embed/{channel_id}) that works with JavaScript on and
// off, the public submit endpoint that checks the answers against the
// channel's fields and stores them as a lead (in live chat mode with a
// widget session for the agent to continue from), the leads API and CSV
// export, and the delivery of each lead to the form's notify_url (a
// durable job, enqueued with the lead) and as a lead.created event.
package form

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/ratelimit"
)

// Store is what the form channel needs from storage.
type Store interface {
	ProjectOf(ctx context.Context, kind agentline.Kind, id int64) (int64, error)
	Project(ctx context.Context, projectID int64) (agentline.Project, error)
	Channel(ctx context.Context, projectID, channelID int64) (agentline.Channel, error)
	CreateLeadThen(ctx context.Context, l agentline.Lead, s *agentline.WidgetSession,
		then func(ctx context.Context, l agentline.Lead, out agentline.Outbox) error) (agentline.Lead, error)
	Lead(ctx context.Context, projectID, id int64) (agentline.Lead, error)
	Leads(ctx context.Context, projectID int64, f agentline.SessionFilter) ([]agentline.Lead, error)
	DeleteLead(ctx context.Context, projectID, id int64) error
	WidgetSessions(ctx context.Context, projectID int64, f agentline.SessionFilter) ([]agentline.SessionWithEvents, error)
	NotifyAttempts(ctx context.Context, projectID, channelID, before int64, limit int) ([]agentline.NotifyAttempt, error)
}

// Options configures a Handler.
type Options struct {
	Store   Store
	Auth    *auth.Service
	Limiter ratelimit.Limiter
	// SubmitsPerMinute is how many submissions one client IP may make per
	// minute (AGENTLINE_FORM_SUBMITS_PER_MINUTE).
	SubmitsPerMinute int64
	Logger           *slog.Logger
}

// Handler serves the form channel's routes.
type Handler struct {
	store   Store
	auth    *auth.Service
	limiter ratelimit.Limiter
	perMin  int64
	logger  *slog.Logger
	now     func() time.Time
}

// New returns the form channel's handler.
func New(o Options) *Handler {
	if o.SubmitsPerMinute <= 0 {
		o.SubmitsPerMinute = 10
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Handler{store: o.Store, auth: o.Auth, limiter: o.Limiter, perMin: o.SubmitsPerMinute,
		logger: o.Logger, now: time.Now}
}

// Routes lists the routes of this package.
func (h *Handler) Routes() []httpx.Route {
	m := h.auth.Route
	public := func(method, pattern string, fn http.HandlerFunc, auth httpx.Auth) httpx.Route {
		return httpx.Route{Method: method, Pattern: pattern, Auth: auth, Name: httpx.NameOf(fn), Handler: fn}
	}
	return []httpx.Route{
		public("GET", "/api/channels/form/embed/{channel_id}", h.page, httpx.Public),
		public("POST", "/api/channels/form/submit/{channel_id}", h.submit, httpx.Public),
		public("OPTIONS", "/api/channels/form/submit/{channel_id}", preflight, httpx.Preflight),

		m("GET", "/api/projects/{project_id}/leads", h.listLeads),
		m("GET", "/api/projects/{project_id}/leads.csv", h.exportLeads),
		m("GET", "/api/leads/{lead_id}", h.getLead),
		m("DELETE", "/api/leads/{lead_id}", h.deleteLead),
		m("GET", "/api/channels/{channel_id}/notify-attempts", h.listNotifyAttempts),
	}
}

// formChannel loads a form channel by its id alone (the public routes have
// no project); anything else is not found.
func (h *Handler) formChannel(ctx context.Context, channelID int64) (agentline.Channel, error) {
	projectID, err := h.store.ProjectOf(ctx, agentline.KindChannel, channelID)
	if err != nil {
		return agentline.Channel{}, err
	}
	ch, err := h.store.Channel(ctx, projectID, channelID)
	if err != nil {
		return ch, err
	}
	if ch.Type != agentline.ChannelForm || ch.Settings.Form == nil {
		return ch, agentline.NotFound("form")
	}
	return ch, nil
}

// pageTitle is the form page's heading: the project's name shown to
// visitors, else its name. A channel's name is the console's (it may say
// "lead form v2"), not the visitors'. When the project cannot be read the
// page goes on with a neutral heading.
func (h *Handler) pageTitle(ctx context.Context, ch agentline.Channel) string {
	p, err := h.store.Project(ctx, ch.ProjectID)
	switch {
	case err != nil:
		httpx.Logger(ctx).Warn("form page: project", "project_id", ch.ProjectID, "err", err)
		return "Contact form"
	case p.Branding.DisplayName != "":
		return p.Branding.DisplayName
	}
	return p.Name
}

// preflight lets any page post the form with JSON: the endpoint is public
// and carries no credentials.
func preflight(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Methods", "POST")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
