package store

import (
	"context"

	"github.com/agentline/agentline"
)

// leadTx is agentline.LeadTx: the outbox of the transaction that stores a
// lead, which can also make the lead a contact of a campaign.
type leadTx struct{ *outbox }

// AddLeadContact adds ct to a campaign of the project in the lead's
// transaction (see agentline.LeadTx). Every refusal is found by a read
// before any write, so that on PostgreSQL no failed statement aborts the
// transaction and the lead is stored all the same.
//
// A completed campaign is one that ran out of contacts: a campaign that
// calls a form's leads does so between leads, so a new contact makes it
// running again (finished_at cleared), with a campaign.started that says
// it reopened, so that its next campaign.completed follows a start as the
// first did. A running campaign's engine is
// woken in the same transaction, so the lead is called as soon as its
// window allows (speed to lead). A contact added as do_not_call, or a
// number the campaign had, leaves the campaign as it is.
func (t leadTx) AddLeadContact(ctx context.Context, projectID, campaignID int64, ct agentline.CampaignContact) (string, error) {
	var status string
	if err := t.c.queryRow(ctx, `SELECT status FROM campaigns WHERE project_id = ? AND id = ?`, projectID, campaignID).Scan(&status); err != nil {
		return "", notFound(err, "campaign")
	}
	if status == agentline.CampaignCancelled {
		return "", agentline.Errorf(agentline.EConflict, "the campaign is cancelled: it calls nobody new")
	}
	added, listed, err := t.db.insertContacts(ctx, t.c, projectID, campaignID, []agentline.CampaignContact{ct})
	switch {
	case err != nil || added == 0:
		return "", err
	case listed > 0:
		return agentline.ContactDoNotCall, nil
	case status == agentline.CampaignCompleted:
		res, err := t.c.exec(ctx, `UPDATE campaigns SET status = ?, finished_at = NULL, updated_at = ? WHERE id = ? AND status = ?`,
			agentline.CampaignRunning, t.db.now(), campaignID, agentline.CampaignCompleted)
		if n, err := affected(res, err); err != nil {
			return "", err
		} else if n > 0 {
			if err := t.db.emitCampaignWith(ctx, t.c, t, projectID, campaignID, agentline.NewCampaignReopenedEvent); err != nil {
				return "", err
			}
		}
	case status != agentline.CampaignRunning:
		return agentline.ContactPending, nil // draft or paused: start or resume wakes it
	}
	return agentline.ContactPending, t.Enqueue(ctx, agentline.DialCampaign{ProjectID: projectID, CampaignID: campaignID})
}
