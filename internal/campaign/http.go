package campaign

import (
	"context"
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
)

// Store is what the campaigns API needs from storage.
type Store interface {
	Agent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error)
	AgentPhoneNumber(ctx context.Context, projectID, agentID int64) (agentline.PhoneNumber, error)

	CreateCampaign(ctx context.Context, c agentline.Campaign) (agentline.Campaign, error)
	Campaign(ctx context.Context, projectID, id int64) (agentline.Campaign, error)
	Campaigns(ctx context.Context, projectID, after int64, limit int) ([]agentline.Campaign, error)
	UpdateCampaignChecked(ctx context.Context, c agentline.Campaign, check func([]agentline.CampaignContact) error) (agentline.Campaign, error)
	DeleteCampaign(ctx context.Context, projectID, id int64) error
	TransitionCampaign(ctx context.Context, projectID, id int64, from []string, to string) (agentline.Campaign, bool, error)

	AddContactsChecked(ctx context.Context, projectID, campaignID int64, checked *agentline.CallingWindow,
		contacts []agentline.CampaignContact, max int) (added, duplicates, onList int, err error)
	CampaignContacts(ctx context.Context, projectID, campaignID int64, status string, after int64, limit int) ([]agentline.CampaignContact, error)

	AddDoNotCall(ctx context.Context, projectID int64, e agentline.DoNotCall) (agentline.DoNotCall, bool, error)
	DoNotCallList(ctx context.Context, projectID int64, after string, limit int) ([]agentline.DoNotCall, error)
	DeleteDoNotCall(ctx context.Context, projectID int64, phoneNumber string) error
}

// Handler serves the campaigns API: campaigns, their contacts and the
// project's do-not-call list. Dialing is the engine's, not this API's.
type Handler struct {
	store Store
	auth  *auth.Service
}

// New returns the campaigns API.
func New(s Store, a *auth.Service) *Handler {
	return &Handler{store: s, auth: a}
}

// Routes lists the routes of the campaigns API.
func (h *Handler) Routes() []httpx.Route {
	m := h.auth.Route
	return []httpx.Route{
		m("POST", "/api/projects/{project_id}/campaigns", h.create),
		m("GET", "/api/projects/{project_id}/campaigns", h.list),
		m("GET", "/api/campaigns/{campaign_id}", h.get),
		m("PATCH", "/api/campaigns/{campaign_id}", h.update),
		m("DELETE", "/api/campaigns/{campaign_id}", h.delete),
		m("POST", "/api/campaigns/{campaign_id}/start", h.start),
		m("POST", "/api/campaigns/{campaign_id}/pause", h.pause),
		m("POST", "/api/campaigns/{campaign_id}/resume", h.resume),
		m("POST", "/api/campaigns/{campaign_id}/cancel", h.cancel),
		m("POST", "/api/campaigns/{campaign_id}/contacts", h.addContacts),
		m("GET", "/api/campaigns/{campaign_id}/contacts", h.contacts),
		m("GET", "/api/campaigns/{campaign_id}/contacts.csv", h.exportContacts),
		m("GET", "/api/projects/{project_id}/dnc", h.doNotCallList),
		m("POST", "/api/projects/{project_id}/dnc", h.addDoNotCall),
		m("DELETE", "/api/projects/{project_id}/dnc/{phone_number}", h.deleteDoNotCall),
	}
}

// campaign authorizes perm on the path's campaign and loads it.
func (h *Handler) campaign(r *http.Request, perm agentline.Permission) (agentline.Campaign, error) {
	id, projectID, err := h.auth.AuthorizePath(r, "campaign_id", agentline.KindCampaign, perm)
	if err != nil {
		return agentline.Campaign{}, err
	}
	return h.store.Campaign(r.Context(), projectID, id)
}

// campaignView is a campaign as the API answers it: retry_after as the
// duration string a client sends.
type campaignView struct {
	agentline.Campaign
	RetryAfter string `json:"retry_after"`
}

func view(c agentline.Campaign) campaignView {
	return campaignView{Campaign: c, RetryAfter: FormatRetryAfter(c.RetryAfter)}
}

// Defaults are the settings a new campaign takes for those its create
// request leaves out, written as the API writes a campaign's. GET
// /api/catalog serves them (campaign_defaults), and the console's
// new-campaign form starts from them, so the defaults live here alone.
type Defaults struct {
	CallingWindow      agentline.CallingWindow `json:"calling_window"`
	MaxConcurrentCalls int                     `json:"max_concurrent_calls"`
	CallsPerSecond     float64                 `json:"calls_per_second"`
	MaxAttempts        int                     `json:"max_attempts"`
	RetryAfter         string                  `json:"retry_after"`
	Voicemail          agentline.Voicemail     `json:"voicemail"`
}

// NewDefaults returns the defaults of a new campaign (newCampaign's).
func NewDefaults() Defaults {
	c := view(newCampaign(0))
	return Defaults{CallingWindow: c.CallingWindow, MaxConcurrentCalls: c.MaxConcurrentCalls, CallsPerSecond: c.CallsPerSecond,
		MaxAttempts: c.MaxAttempts, RetryAfter: c.RetryAfter, Voicemail: c.Voicemail}
}
