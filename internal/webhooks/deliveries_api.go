package webhooks

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
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
	ds, err := h.store.WebhookDeliveries(r.Context(), projectID, id, limit, offset)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"deliveries": ds})
	return nil
}

func (h *Handler) delivery(w http.ResponseWriter, r *http.Request) error {
	id, projectID, err := h.auth.AuthorizePath(r, "webhook_id", agentline.KindWebhook, agentline.PermView)
	if err != nil {
		return err
	}
	deliveryID, err := httpx.PathID(r, "delivery_id")
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
	id, projectID, err := h.auth.AuthorizePath(r, "webhook_id", agentline.KindWebhook, agentline.PermCreate)
	if err != nil {
		return err
	}
	deliveryID, err := httpx.PathID(r, "delivery_id")
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
