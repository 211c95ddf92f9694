package form

import (
	"context"
	"errors"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
	"github.com/agentline/agentline/internal/httpx"
)

// leadContact makes l a contact of the campaign its form names (speed to
// lead: settings.form.campaign_id), in the lead's transaction, so the
// campaign calls it as soon as its window allows: the answer of the form's
// phone field (agentline.FormSettings.PhoneField) as its number, its
// answers as variables, its form and time as consent
// (campaign.LeadContact).
//
// A lead is stored whatever becomes of its contact: the person asked to be
// contacted, and lead.created and notify_url still tell of it. So a lead
// with no number, a number not in international form, a campaign that was
// deleted or cancelled, or a number the campaign has already, makes no
// contact, and the log says why; a number on the project's do-not-call
// list makes a do_not_call contact, which is never dialed and counts
// where the campaign's contacts are counted. Only a failing database fails
// the lead.
func leadContact(ctx context.Context, ch agentline.Channel, l agentline.Lead, out agentline.Outbox) error {
	form := ch.Settings.Form
	if form == nil || form.CampaignID == nil {
		return nil
	}
	log := httpx.Logger(ctx).With("lead_id", l.ID, "channel_id", ch.ID, "campaign_id", *form.CampaignID)
	field, ok := form.PhoneField()
	phone, _ := l.Answers[field.Name].(string)
	if !ok || strings.TrimSpace(phone) == "" {
		log.Info("the lead left no phone number: its campaign does not call it")
		return nil
	}
	tx, ok := out.(agentline.LeadTx)
	if !ok {
		return errors.New("the store gave the lead's follow-up no way to add a campaign contact")
	}
	ct, err := campaign.LeadContact(l, phone)
	if err != nil {
		log.Warn("the lead's phone number cannot be called: its campaign does not call it", "reason", agentline.ErrorMessage(err))
		return nil
	}
	status, err := tx.AddLeadContact(ctx, ch.ProjectID, *form.CampaignID, ct)
	switch code := agentline.ErrorCode(err); {
	case code == agentline.ENotFound || code == agentline.EConflict:
		log.Warn("the form's campaign takes no contact: the lead is not called", "reason", agentline.ErrorMessage(err))
	case err != nil:
		return err
	case status == "":
		log.Info("the form's campaign has the lead's number already")
	default:
		log.Info("the lead is a contact of the form's campaign", "status", status)
	}
	return nil
}
