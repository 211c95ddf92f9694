package telephony

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/livecall"
)

var threeDigits = regexp.MustCompile(`^[0-9]{3}$`)

// GET /api/projects/{project_id}/telephony/numbers/available?country=US&area_code=415
func (h *Handler) availableNumbers(w http.ResponseWriter, r *http.Request) error {
	if _, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView); err != nil {
		return err
	}
	q := r.URL.Query()
	if c := q.Get("country"); c != "" && !strings.EqualFold(c, "US") {
		return agentline.Invalid("country", "only US local numbers are supported, not country %q", c)
	}
	area := q.Get("area_code")
	if area != "" && !threeDigits.MatchString(area) {
		return agentline.Invalid("area_code", "area_code must be three digits, such as 415")
	}
	cr, err := h.carrier()
	if err != nil {
		return err
	}
	list, err := cr.AvailableNumbers(r.Context(), area)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// GET /api/projects/{project_id}/telephony/numbers
func (h *Handler) listNumbers(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.store.PhoneNumbers(r.Context(), projectID)
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(n agentline.PhoneNumber) listing.Cursor { return listing.After(n.ID) })
}

// linkableAgent loads an agent of the project that may get a number: it
// takes calls, and it has no number other than numberID yet.
func (h *Handler) linkableAgent(ctx context.Context, projectID, agentID, numberID int64) (agentline.Agent, error) {
	agent, err := h.store.PublishedAgent(ctx, projectID, agentID)
	if errors.Is(err, agentline.ErrNotFound) {
		return agent, agentline.Invalid("agent_id", "agent %d is not in this project", agentID)
	}
	if err != nil {
		return agent, err
	}
	if err := livecall.CheckAgent(agent); err != nil {
		return agent, err
	}
	existing, err := h.store.AgentPhoneNumber(ctx, projectID, agentID)
	if err == nil && existing.ID != numberID {
		return agent, agentline.Errorf(agentline.EConflict,
			"agent %d already has phone number %s (number %d); an agent has one number: release it first", agentID, existing.PhoneNumber, existing.ID)
	}
	if err != nil && !errors.Is(err, agentline.ErrNotFound) {
		return agent, err
	}
	return agent, nil
}

// numberPath authorizes perm on the path's project and reads the path's
// number_id: a number's routes sit under its project, which the store
// checks it belongs to.
func (h *Handler) numberPath(r *http.Request, perm agentline.Permission) (projectID, numberID int64, err error) {
	if projectID, _, err = h.auth.AuthorizeProjectPath(r, perm); err != nil {
		return 0, 0, err
	}
	if numberID, err = httpx.PathID(r, "number_id"); err != nil {
		return 0, 0, err
	}
	return projectID, numberID, nil
}

// PATCH /api/projects/{project_id}/telephony/numbers/{number_id} {status?, agent_id?}
func (h *Handler) updateNumber(w http.ResponseWriter, r *http.Request) error {
	projectID, numberID, err := h.numberPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in numberChange
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	n, err := h.changeNumber(r.Context(), projectID, numberID, in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, n)
	return nil
}

// numberChange is what a number's update may change; nil leaves it.
type numberChange struct {
	Status  *agentline.NumberStatus `json:"status"`
	AgentID *int64                  `json:"agent_id"`
}

// changeNumber applies a change to a number of the project; the carrier
// is not asked.
//
// status "suspended" keeps the agent link but stops calls; "active" takes
// calls again (and needs an agent); "unassigned" unlinks the agent.
// agent_id links (or relinks) an agent and makes the number active unless
// status says suspended.
func (h *Handler) changeNumber(ctx context.Context, projectID, numberID int64, in numberChange) (agentline.PhoneNumber, error) {
	if in.Status == nil && in.AgentID == nil {
		return agentline.PhoneNumber{}, agentline.Invalid("", "send status (active, suspended or unassigned) or agent_id")
	}
	if in.Status != nil && !in.Status.Valid() {
		return agentline.PhoneNumber{}, agentline.Invalid("status", "status must be active, suspended or unassigned, not %q", *in.Status)
	}
	n, err := h.store.PhoneNumber(ctx, projectID, numberID)
	if err != nil {
		return agentline.PhoneNumber{}, err
	}
	if in.AgentID != nil {
		if in.Status != nil && *in.Status == agentline.NumberUnassigned {
			return agentline.PhoneNumber{}, agentline.Invalid("status", "a number linked to an agent cannot be unassigned; send status alone to unlink")
		}
		if *in.AgentID <= 0 {
			return agentline.PhoneNumber{}, agentline.Invalid("agent_id", "agent_id must be a positive id; send status unassigned to unlink")
		}
		if _, err := h.linkableAgent(ctx, projectID, *in.AgentID, n.ID); err != nil {
			return agentline.PhoneNumber{}, err
		}
		n.AgentID, n.Status = in.AgentID, agentline.NumberActive
	}
	if in.Status != nil {
		n.Status = *in.Status
	}
	switch {
	case n.Status == agentline.NumberUnassigned:
		n.AgentID = nil
	case n.AgentID == nil:
		return agentline.PhoneNumber{}, agentline.Invalid("status", "the number has no agent: send agent_id to link one before it can be %s", n.Status)
	}
	return h.store.UpdatePhoneNumber(ctx, n)
}

// DELETE /api/projects/{project_id}/telephony/numbers/{number_id}
func (h *Handler) releaseNumber(w http.ResponseWriter, r *http.Request) error {
	projectID, numberID, err := h.numberPath(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	if err := h.releaseProvisioned(r.Context(), projectID, numberID); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}

// releaseProvisioned releases a number of the project at the carrier, then
// deletes its record. From the release on, the caller's context no longer
// cuts the work short: a release the carrier made must also delete the
// record. A number the carrier no longer has still loses its record; one
// the carrier would not release keeps it.
func (h *Handler) releaseProvisioned(ctx context.Context, projectID, numberID int64) error {
	n, err := h.store.PhoneNumber(ctx, projectID, numberID)
	if err != nil {
		return err
	}
	cr, err := h.carrier()
	if err != nil {
		return err
	}
	log := httpx.Logger(ctx).With("project_id", projectID, "number_id", n.ID, "carrier_sid", n.CarrierSID)
	ctx = context.WithoutCancel(ctx)
	if err := cr.ReleaseNumber(ctx, n.CarrierSID); errors.Is(err, carrier.ErrNumberGone) {
		log.Warn("the carrier no longer had the number; deleting its record", "phone_number", n.PhoneNumber)
	} else if err != nil {
		return err
	}
	if err := h.store.DeletePhoneNumber(ctx, projectID, n.ID); err != nil {
		return err
	}
	log.Info("released a phone number", "phone_number", n.PhoneNumber)
	return nil
}
