package webhooks

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

func (h *Handler) deliveries(w http.ResponseWriter, r *http.Request) error {
	id, projectID, err := h.auth.AuthorizePath(r, "webhook_id", agentline.KindWebhook, agentline.PermView)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 50, 200)
	if err != nil {
		return err
	}
	offset, err := queryInt(r, "offset", 0, 1_000_000)
	if err != nil {
		return err
	}
	before, err := listing.IntCursor(r.URL.Query())
	if err != nil {
		return err
	}
	if before > 0 && offset > 0 {
		return agentline.Invalid("cursor", "pass cursor or the deprecated offset, not both")
	}
	// One more than asked tells whether there is a next page.
	ds, err := h.store.WebhookDeliveries(r.Context(), projectID, id, limit+1, offset)
	if before > 0 {
		ds, err = h.store.WebhookDeliveriesBefore(r.Context(), projectID, id, before, limit+1)
	}
	if err != nil {
		return err
	}
	ds, next := listing.Next(ds, limit, func(d agentline.WebhookDelivery) listing.Cursor { return listing.After(d.ID) })
	if len(ds) > limit { // limit 0, kept from before cursors: an empty page
		ds = ds[:limit]
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"deliveries": ds, "next_cursor": next})
	return nil
}

// deliveryPath authorizes perm on the path's endpoint and reads the path's
// delivery_id, which the store finds only among that endpoint's.
func (h *Handler) deliveryPath(r *http.Request, perm agentline.Permission) (endpointID, projectID, deliveryID int64, err error) {
	if endpointID, projectID, err = h.auth.AuthorizePath(r, "webhook_id", agentline.KindWebhook, perm); err != nil {
		return 0, 0, 0, err
	}
	if deliveryID, err = httpx.PathID(r, "delivery_id"); err != nil {
		return 0, 0, 0, err
	}
	return endpointID, projectID, deliveryID, nil
}

func (h *Handler) delivery(w http.ResponseWriter, r *http.Request) error {
	id, projectID, deliveryID, err := h.deliveryPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	d, err := h.store.WebhookDelivery(r.Context(), projectID, id, deliveryID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}

// retry sends a delivered or failed delivery again, same webhook-id.
func (h *Handler) retry(w http.ResponseWriter, r *http.Request) error {
	id, projectID, deliveryID, err := h.deliveryPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	d, err := h.store.RetryDelivery(r.Context(), projectID, id, deliveryID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusAccepted, d)
	return nil
}

// test sends a webhook.test event to the endpoint.
func (h *Handler) test(w http.ResponseWriter, r *http.Request) error {
	e, err := h.endpoint(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	if !e.Enabled {
		return agentline.Errorf(agentline.EConflict, "the webhook endpoint is disabled; enable it first (PATCH enabled: true)")
	}
	ev, err := agentline.NewEvent(e.ProjectID, agentline.EventWebhookTest, "", map[string]any{
		"webhook_id": e.ID, "message": "This is a test event from agentline.",
	})
	if err != nil {
		return err
	}
	d, err := h.store.SendTestEvent(r.Context(), e.ProjectID, e.ID, ev)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusAccepted, d)
	return nil
}
