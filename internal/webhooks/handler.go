// Package webhooks sends a project's events to the customer's own systems:
// the endpoints API, Standard Webhooks signing, and the durable delivery
// worker that retries for days. Events are emitted through the store's
// outbox (agentline.Outbox) in the transaction of the change that causes
// them; this package delivers them.
package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Store is what the endpoints API needs from storage.
type Store interface {
	CreateWebhook(ctx context.Context, e agentline.WebhookEndpoint) (agentline.WebhookEndpoint, error)
	Webhook(ctx context.Context, projectID, id int64) (agentline.WebhookEndpoint, error)
	Webhooks(ctx context.Context, projectID int64) ([]agentline.WebhookEndpoint, error)
	UpdateWebhook(ctx context.Context, e agentline.WebhookEndpoint) (agentline.WebhookEndpoint, error)
	DeleteWebhook(ctx context.Context, projectID, id int64) error
	RotateWebhookSecret(ctx context.Context, projectID, id int64, secret string, until time.Time) (agentline.WebhookEndpoint, error)
	WebhookDeliveries(ctx context.Context, projectID, endpointID int64, limit, offset int) ([]agentline.WebhookDelivery, error)
	WebhookDeliveriesBefore(ctx context.Context, projectID, endpointID, before int64, limit int) ([]agentline.WebhookDelivery, error)
	WebhookDelivery(ctx context.Context, projectID, endpointID, id int64) (agentline.WebhookDelivery, error)
	SendTestEvent(ctx context.Context, projectID, endpointID int64, e agentline.Event) (agentline.WebhookDelivery, error)
	RetryDelivery(ctx context.Context, projectID, endpointID, id int64) (agentline.WebhookDelivery, error)
}

// RotationOverlap is how long the previous secret keeps signing after a
// rotation.
const RotationOverlap = 24 * time.Hour

// Handler serves the endpoints API.
type Handler struct {
	store        Store
	auth         *auth.Service
	allowPrivate bool
	now          func() time.Time
}

// NewHandler returns the endpoints API. allowPrivate lets endpoints use
// plain http and internal addresses (AGENTLINE_ALLOW_PRIVATE_WEBHOOKS, for
// tests and local work; see internal/egress).
func NewHandler(s Store, a *auth.Service, allowPrivate bool) *Handler {
	return &Handler{store: s, auth: a, allowPrivate: allowPrivate, now: time.Now}
}

// Routes lists the routes of this package.
func (h *Handler) Routes() []httpx.Route {
	m := h.auth.Route
	return []httpx.Route{
		m("POST", "/api/projects/{project_id}/webhooks", h.create),
		m("GET", "/api/projects/{project_id}/webhooks", h.list),
		m("GET", "/api/webhooks/{webhook_id}", h.get),
		m("PATCH", "/api/webhooks/{webhook_id}", h.update),
		m("DELETE", "/api/webhooks/{webhook_id}", h.delete),
		m("POST", "/api/webhooks/{webhook_id}/rotate-secret", h.rotateSecret),
		m("POST", "/api/webhooks/{webhook_id}/test", h.test),
		m("GET", "/api/webhooks/{webhook_id}/deliveries", h.deliveries),
		m("GET", "/api/webhooks/{webhook_id}/deliveries/{delivery_id}", h.delivery),
		m("POST", "/api/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", h.retry),
	}
}

// withSecret is an endpoint with its whole secret: the answer of create and
// rotate-secret, the only times the secret is shown.
type withSecret struct {
	agentline.WebhookEndpoint
	Secret string `json:"secret"`
}

type endpointInput struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events"`
	Description *string   `json:"description"`
	Enabled     *bool     `json:"enabled"`
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in endpointInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.URL == nil {
		return agentline.Invalid("url", "url is required")
	}
	e := agentline.WebhookEndpoint{ProjectID: projectID, Events: []string{"*"}, Enabled: true}
	if err := h.apply(&e, in); err != nil {
		return err
	}
	if e.Secret, err = NewSecret(); err != nil {
		return err
	}
	if e, err = h.store.CreateWebhook(r.Context(), e); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, withSecret{e, e.Secret})
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	eps, err := h.store.Webhooks(r.Context(), projectID)
	if err != nil {
		return err
	}
	eps, next, err := listing.Slice(r.URL.Query(), eps, func(e agentline.WebhookEndpoint) listing.Cursor { return listing.After(e.ID) })
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"webhooks": eps, "next_cursor": next})
	return nil
}

// endpoint authorizes perm on the path's endpoint and loads it.
func (h *Handler) endpoint(r *http.Request, perm agentline.Permission) (agentline.WebhookEndpoint, error) {
	id, projectID, err := h.auth.AuthorizePath(r, "webhook_id", agentline.KindWebhook, perm)
	if err != nil {
		return agentline.WebhookEndpoint{}, err
	}
	return h.store.Webhook(r.Context(), projectID, id)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	e, err := h.endpoint(r, agentline.PermView)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, e)
	return nil
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	e, err := h.endpoint(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in endpointInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if err := h.apply(&e, in); err != nil {
		return err
	}
	if e, err = h.store.UpdateWebhook(r.Context(), e); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, e)
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	return h.auth.DeletePath(w, r, "webhook_id", agentline.KindWebhook, h.store.DeleteWebhook)
}

// rotateSecret makes a new secret; the old one signs too for 24 h, so
// receivers can switch without losing a delivery.
func (h *Handler) rotateSecret(w http.ResponseWriter, r *http.Request) error {
	id, projectID, err := h.auth.AuthorizePath(r, "webhook_id", agentline.KindWebhook, agentline.PermCreate)
	if err != nil {
		return err
	}
	secret, err := NewSecret()
	if err != nil {
		return err
	}
	e, err := h.store.RotateWebhookSecret(r.Context(), projectID, id, secret, h.now().Add(RotationOverlap))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, withSecret{e, e.Secret})
	return nil
}

// apply checks in and sets what it holds on e; a problem names its field.
func (h *Handler) apply(e *agentline.WebhookEndpoint, in endpointInput) error {
	if in.URL != nil {
		if err := h.checkURL(*in.URL); err != nil {
			return err
		}
		e.URL = strings.TrimSpace(*in.URL)
	}
	if in.Events != nil {
		events, err := checkEvents(*in.Events)
		if err != nil {
			return err
		}
		e.Events = events
	}
	if in.Description != nil {
		if len(*in.Description) > 500 {
			return agentline.Invalid("description", "description is at most 500 characters")
		}
		e.Description = *in.Description
	}
	if in.Enabled != nil {
		e.Enabled = *in.Enabled
	}
	return nil
}

// checkURL checks an endpoint's URL: the outgoing address policy's
// save-time check (internal/egress), and https, since deliveries carry
// customer data (plain http only with allowPrivate, for local work).
func (h *Handler) checkURL(raw string) error {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return agentline.Invalid("url", "url must be an absolute URL, such as https://hooks.example.com/agentline")
	}
	if len(raw) > 2000 {
		return agentline.Invalid("url", "url is at most 2000 characters")
	}
	if err := egress.CheckURL("url", raw, h.allowPrivate); err != nil {
		return err
	}
	if u, _ := url.Parse(raw); u.Scheme != "https" && !h.allowPrivate {
		return agentline.Invalid("url", "url must use https")
	}
	return nil
}

func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, agentline.Invalid("events", `events must list event types, or be ["*"] for all`)
	}
	out := make([]string, 0, len(events))
	for i, t := range events {
		switch {
		case t == "*" && len(events) == 1:
		case t == "*":
			return nil, agentline.Invalid("events", `"*" stands alone: it means every event`)
		case !agentline.KnownEventType(t):
			return nil, agentline.Invalid("events", "events[%d]: %q is no event type; the types are %s", i, t, strings.Join(agentline.EventTypes(), ", "))
		}
		if !contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// NewSecret returns a new signing secret: "whsec_" and 32 random bytes in
// base64, as Standard Webhooks' libraries take it.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:]), nil
}

// queryInt reads a non-negative integer query parameter, def when absent.
func queryInt(r *http.Request, name string, def, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > max {
		return 0, agentline.Invalid(name, "%s must be a whole number from 0 to %d", name, max)
	}
	return n, nil
}
