package telephony

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// POST /api/projects/{project_id}/telephony/numbers {phone_number, agent_id}
func (h *Handler) createNumber(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in struct {
		PhoneNumber string `json:"phone_number"`
		AgentID     int64  `json:"agent_id"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	n, err := h.provisionNumber(r.Context(), projectID, in.PhoneNumber, in.AgentID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, n)
	return nil
}

// provisionNumber buys phone for an agent of the project. It checks
// everything that can be checked before paying, buys the number with its
// webhooks pointing at this deployment, then stores it. From the purchase
// on, the caller's context no longer cuts the work short: if storing fails,
// or the carrier's answer to the purchase never comes, the number is
// released again so that nothing is billed for nothing.
func (h *Handler) provisionNumber(ctx context.Context, projectID int64, phone string, agentID int64) (agentline.PhoneNumber, error) {
	if !agentline.ValidE164(phone) {
		return agentline.PhoneNumber{}, agentline.Invalid("phone_number", "phone_number must be in E.164 form, such as +14155550100")
	}
	if !agentline.ValidUSNumber(phone) {
		return agentline.PhoneNumber{}, agentline.Invalid("phone_number", "only US local numbers are supported: +1 and ten digits")
	}
	if agentID <= 0 {
		return agentline.PhoneNumber{}, agentline.Invalid("agent_id", "agent_id is required")
	}
	agent, err := h.linkableAgent(ctx, projectID, agentID, 0)
	if err != nil {
		return agentline.PhoneNumber{}, err
	}
	if err := h.unprovisioned(ctx, projectID, phone); err != nil {
		return agentline.PhoneNumber{}, err
	}
	cr, err := h.carrier()
	if err != nil {
		return agentline.PhoneNumber{}, err
	}
	host, err := h.botHost()
	if err != nil {
		return agentline.PhoneNumber{}, err
	}
	ctx = context.WithoutCancel(ctx)
	sid, err := cr.BuyNumber(ctx, carrier.BuyRequest{
		PhoneNumber:       phone,
		FriendlyName:      fmt.Sprintf("agentline project %d agent %d", projectID, agent.ID),
		VoiceURL:          "https://" + host + "/api/telephony/inbound",
		StatusCallbackURL: "https://" + host + "/api/telephony/status",
	})
	if errors.Is(err, carrier.ErrNoAnswer) {
		return agentline.PhoneNumber{}, h.undoUnansweredPurchase(ctx, cr, phone, err)
	}
	if err != nil {
		return agentline.PhoneNumber{}, err
	}
	return h.storeBought(ctx, cr, agentline.PhoneNumber{
		ProjectID: projectID, PhoneNumber: phone, AgentID: &agent.ID,
		Status: agentline.NumberActive, CarrierSID: sid,
	})
}

// unprovisioned answers conflict when phone is already provisioned, here
// or in another project, before anything is paid for it.
func (h *Handler) unprovisioned(ctx context.Context, projectID int64, phone string) error {
	existing, err := h.store.PhoneNumberByE164(ctx, phone)
	switch {
	case errors.Is(err, agentline.ErrNotFound):
		return nil
	case err != nil:
		return err
	case existing.ProjectID == projectID:
		return agentline.Errorf(agentline.EConflict, "phone number %s is already provisioned in this project (number %d)", phone, existing.ID)
	}
	return agentline.Errorf(agentline.EConflict, "phone number %s is already provisioned", phone)
}

// storeBought stores a number the carrier has sold, or releases it again
// when it cannot be stored.
func (h *Handler) storeBought(ctx context.Context, cr carrier.Carrier, bought agentline.PhoneNumber) (agentline.PhoneNumber, error) {
	log := httpx.Logger(ctx).With("project_id", bought.ProjectID, "agent_id", *bought.AgentID, "carrier_sid", bought.CarrierSID)
	n, err := h.store.CreatePhoneNumber(ctx, bought)
	if err != nil {
		if rerr := cr.ReleaseNumber(ctx, bought.CarrierSID); rerr != nil && !errors.Is(rerr, carrier.ErrNumberGone) {
			log.Error("bought a number, could not store it, and could not release it: release it by hand", "phone_number", bought.PhoneNumber, "err", rerr, "store_err", err)
		} else {
			log.Warn("bought a number and released it again because storing it failed", "phone_number", bought.PhoneNumber, "err", err)
		}
		return agentline.PhoneNumber{}, err
	}
	log.Info("provisioned a phone number", "number_id", n.ID)
	return n, nil
}

// undoUnansweredPurchase handles a purchase whose answer never came: the
// carrier may have sold the number anyway. It looks the number up at the
// carrier and releases it if the account has it, so no number is billed
// without a record here, and answers carrier_error saying what happened.
func (h *Handler) undoUnansweredPurchase(ctx context.Context, cr carrier.Carrier, phone string, buyErr error) error {
	log := httpx.Logger(ctx).With("phone_number", phone)
	sid, err := cr.FindNumber(ctx, phone)
	if errors.Is(err, carrier.ErrNumberGone) {
		log.Warn("the carrier did not answer a purchase and has not sold the number", "err", buyErr)
		return &agentline.Error{Code: agentline.ECarrier, Err: buyErr,
			Message: "the carrier did not answer the purchase in time; it has not sold you " + phone + ", so nothing is billed: try again"}
	}
	if err == nil {
		err = cr.ReleaseNumber(ctx, sid)
		if err == nil || errors.Is(err, carrier.ErrNumberGone) {
			log.Warn("the carrier did not answer a purchase but had sold the number; released it again", "carrier_sid", sid, "err", buyErr)
			return &agentline.Error{Code: agentline.ECarrier, Err: buyErr,
				Message: "the carrier did not answer the purchase in time; it had sold you " + phone + " anyway and the number was released again: try again"}
		}
	}
	log.Error("the carrier did not answer a purchase, and whether it sold the number is unknown: check the carrier's console", "carrier_sid", sid, "err", buyErr, "undo_err", err)
	return &agentline.Error{Code: agentline.ECarrier, Err: buyErr,
		Message: "the carrier did not answer the purchase in time and could not be asked whether it sold you " + phone + ": check your Twilio console before trying again"}
}
