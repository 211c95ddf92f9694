package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// contactBatch is how many contacts one INSERT carries: few enough for
// SQLite's limit on parameters, many enough that a large upload to
// PostgreSQL is a few dozen round trips, not thousands.
const contactBatch = 200

// AddContacts stores contacts (valid, each number once) in a campaign of
// the project, in one transaction: all of them or none. A number the
// campaign already has is a duplicate and left as it is; a number on the
// project's do-not-call list is stored with status do_not_call, and never
// dialed. Contacts can be added to a draft, running or paused campaign;
// a campaign may hold at most max contacts in all (too_large beyond).
// Contacts added to a running campaign are dialed as soon as their window
// allows: a DialCampaign job is inserted in the same transaction.
// It returns how many were added, how many were duplicates, and how many
// of those added are on the do-not-call list.
func (db *DB) AddContacts(ctx context.Context, projectID, campaignID int64, contacts []agentline.CampaignContact, max int) (added, duplicates, onList int, err error) {
	return db.AddContactsChecked(ctx, projectID, campaignID, nil, contacts, max)
}

// AddContactsChecked is AddContacts for contacts checked against the
// calling window checked (when not nil): if the campaign's window is
// another by the time they are stored (a PATCH came between), nothing is
// stored and the answer is a conflict asking to send them again. The
// campaign's row is locked first, so that a change of its window waits
// for the upload, or the upload for the change (UpdateCampaignChecked
// then sees its contacts).
func (db *DB) AddContactsChecked(ctx context.Context, projectID, campaignID int64, checked *agentline.CallingWindow,
	contacts []agentline.CampaignContact, max int) (added, duplicates, onList int, err error) {
	lock := ""
	if db.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	err = db.tx(ctx, func(c conn) error {
		var status, window string
		if err := c.queryRow(ctx, `SELECT status, calling_window FROM campaigns WHERE project_id = ? AND id = ?`+lock,
			projectID, campaignID).Scan(&status, &window); err != nil {
			return notFound(err, "campaign")
		}
		if status == agentline.CampaignCompleted || status == agentline.CampaignCancelled {
			return agentline.Errorf(agentline.EConflict, "the campaign is %s; contacts can be added to a draft, running or paused campaign", status)
		}
		if checked != nil {
			var now agentline.CallingWindow
			if err := json.Unmarshal([]byte(window), &now); err != nil {
				return err
			}
			if !now.Equal(*checked) {
				return agentline.Errorf(agentline.EConflict, "the campaign's calling window changed while the contacts were checked against it; send them again")
			}
		}
		added, duplicates, onList = 0, 0, 0
		for start := 0; start < len(contacts); start += contactBatch {
			batch := contacts[start:min(start+contactBatch, len(contacts))]
			n, listed, err := db.insertContacts(ctx, c, projectID, campaignID, batch)
			if err != nil {
				return err
			}
			added, duplicates, onList = added+n, duplicates+len(batch)-n, onList+listed
		}
		var total int
		if err := c.queryRow(ctx, `SELECT count(*) FROM campaign_contacts WHERE campaign_id = ?`, campaignID).Scan(&total); err != nil {
			return err
		}
		if total > max {
			return agentline.Errorf(agentline.ETooLarge, "a campaign holds at most %d contacts; this upload would bring it to %d", max, total)
		}
		if err := c.audit(ctx, change(projectID, "campaign.contacts_add", "campaign", campaignID,
			map[string][2]any{"contacts_added": {nil, added}, "duplicates": {nil, duplicates}})); err != nil {
			return err
		}
		if status != agentline.CampaignRunning || added == onList {
			return nil
		}
		// A running campaign dials the new contacts as soon as their
		// window allows.
		return db.outboxOn(c).Enqueue(ctx, agentline.DialCampaign{ProjectID: projectID, CampaignID: campaignID})
	})
	if err != nil {
		return 0, 0, 0, err
	}
	return added, duplicates, onList, nil
}

// insertContacts inserts one batch, skipping numbers the campaign has,
// and returns how many it inserted and how many of those are on the
// do-not-call list.
func (db *DB) insertContacts(ctx context.Context, c conn, projectID, campaignID int64, batch []agentline.CampaignContact) (int, int, error) {
	numbers := make([]any, 0, len(batch)+1)
	numbers = append(numbers, projectID)
	for _, ct := range batch {
		numbers = append(numbers, ct.PhoneNumber)
	}
	listed, err := queryAll(ctx, c, scanString, `SELECT phone_number FROM do_not_call WHERE project_id = ? AND phone_number IN (`+
		placeholders(len(batch))+`)`, numbers...)
	if err != nil {
		return 0, 0, err
	}
	dnc := make(map[string]bool, len(listed))
	for _, n := range listed {
		dnc[n] = true
	}
	now := db.now()
	args := make([]any, 0, len(batch)*12)
	for _, ct := range batch {
		vars, err := json.Marshal(ct.Variables)
		if err != nil {
			return 0, 0, err
		}
		if ct.Variables == nil {
			vars = []byte("{}")
		}
		status, next := agentline.ContactPending, &now
		if dnc[ct.PhoneNumber] {
			status, next = agentline.ContactDoNotCall, nil
		}
		source, at := consentColumns(ct.Consent)
		args = append(args, campaignID, projectID, ct.PhoneNumber, ct.Timezone, string(vars), source, at, status, next, now, now)
	}
	const row = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	values := row
	for range len(batch) - 1 {
		values += ", " + row
	}
	statuses, err := queryAll(ctx, c, scanString, `INSERT INTO campaign_contacts (campaign_id, project_id, phone_number, timezone,
		variables, consent_source, consent_at, status, next_attempt_at, created_at, updated_at)
		VALUES `+values+` ON CONFLICT (campaign_id, phone_number) DO NOTHING RETURNING status`, args...)
	if err != nil {
		return 0, 0, fmt.Errorf("add contacts: %w", err)
	}
	n := 0
	for _, s := range statuses {
		if s == agentline.ContactDoNotCall {
			n++
		}
	}
	return len(statuses), n, nil
}

// consentColumns is a consent as its two columns hold it: no consent is
// an empty source, no time a NULL.
func consentColumns(c *agentline.ContactConsent) (string, *time.Time) {
	if c == nil {
		return "", nil
	}
	if c.At.IsZero() {
		return c.Source, nil
	}
	at := c.At.UTC()
	return c.Source, &at
}

// consentOf is the consent its columns hold, nil for none.
func consentOf(source string, at sql.NullTime) *agentline.ContactConsent {
	if source == "" {
		return nil
	}
	c := &agentline.ContactConsent{Source: source}
	if at.Valid {
		c.At = at.Time.UTC()
	}
	return c
}

const contactColumns = `id, campaign_id, project_id, phone_number, timezone, variables, consent_source, consent_at, status,
	attempts, next_attempt_at, last_call_id, created_at, updated_at`

func scanContact(row interface{ Scan(...any) error }) (agentline.CampaignContact, error) {
	var ct agentline.CampaignContact
	var vars, source string
	var consentAt, next sql.NullTime
	var lastCall sql.NullInt64
	err := row.Scan(&ct.ID, &ct.CampaignID, &ct.ProjectID, &ct.PhoneNumber, &ct.Timezone, &vars, &source, &consentAt, &ct.Status,
		&ct.Attempts, &next, &lastCall, utc(&ct.CreatedAt), utc(&ct.UpdatedAt))
	if err != nil {
		return ct, err
	}
	ct.Consent, ct.NextAttemptAt = consentOf(source, consentAt), nullTime(next)
	if lastCall.Valid {
		ct.LastCallID = &lastCall.Int64
	}
	ct.Variables = map[string]string{}
	if err := json.Unmarshal([]byte(vars), &ct.Variables); err != nil {
		return ct, fmt.Errorf("contact %d variables: %w", ct.ID, err)
	}
	ct.ConversationIDs = []string{}
	return ct, nil
}

// CampaignContacts lists at most limit contacts of a campaign of the
// project after the one with id after (0: from the first), in the order
// they were added; status, when not "", keeps those with that status.
// Each comes with its dials, the conversation ids of those that made a
// call, and its last dial's outcome with the analysis of its
// conversation.
//
// The three reads see one moment (readTx): a contact's status agrees with
// its dials.
func (db *DB) CampaignContacts(ctx context.Context, projectID, campaignID int64, status string, after int64, limit int) ([]agentline.CampaignContact, error) {
	return readIn(ctx, db, func(c conn) ([]agentline.CampaignContact, error) {
		return campaignContactsIn(ctx, c, projectID, campaignID, status, after, limit)
	})
}

// campaignContactsIn is CampaignContacts read on c.
func campaignContactsIn(ctx context.Context, c conn, projectID, campaignID int64, status string, after int64, limit int) ([]agentline.CampaignContact, error) {
	q := `SELECT ` + contactColumns + ` FROM campaign_contacts WHERE project_id = ? AND campaign_id = ? AND id > ?`
	args := []any{projectID, campaignID, after}
	if status != "" {
		q += ` AND status = ?`
		args = append(args, status)
	}
	list, err := queryAll(ctx, c, scanContact, q+` ORDER BY id LIMIT ?`, append(args, limit)...)
	if err != nil || len(list) == 0 {
		return list, err
	}
	if err := fillDials(ctx, c, projectID, list); err != nil {
		return nil, err
	}
	if err := fillOutcomes(ctx, c, projectID, list); err != nil {
		return nil, err
	}
	return list, nil
}

const dialColumns = `id, campaign_id, contact_id, attempt, call_id, dialed_at, consent_source, consent_at, outcome`

func scanDial(row interface{ Scan(...any) error }) (agentline.CampaignDial, error) {
	var d agentline.CampaignDial
	var call sql.NullInt64
	var source string
	var at sql.NullTime
	if err := row.Scan(&d.ID, &d.CampaignID, &d.ContactID, &d.Attempt, &call, utc(&d.DialedAt), &source, &at, &d.Outcome); err != nil {
		return d, err
	}
	if call.Valid {
		d.CallID = &call.Int64
	}
	d.Consent = consentOf(source, at)
	return d, nil
}

// fillDials reads the dials of the contacts of list (a page) in one query.
func fillDials(ctx context.Context, c conn, projectID int64, list []agentline.CampaignContact) error {
	args := []any{projectID}
	byID := make(map[int64]int, len(list))
	for i, ct := range list {
		args, byID[ct.ID] = append(args, ct.ID), i
	}
	dials, err := queryAll(ctx, c, scanDial, `SELECT `+dialColumns+` FROM campaign_dials
		WHERE project_id = ? AND contact_id IN (`+placeholders(len(list))+`) ORDER BY contact_id, attempt`, args...)
	if err != nil {
		return err
	}
	for _, d := range dials {
		ct := &list[byID[d.ContactID]]
		ct.Dials = append(ct.Dials, d)
		if d.CallID != nil {
			ct.ConversationIDs = append(ct.ConversationIDs, agentline.CallConversationID(*d.CallID))
		}
	}
	return nil
}

// fillOutcomes sets each contact's LastOutcome from its last dial and the
// analysis of that dial's conversation, read in one query.
func fillOutcomes(ctx context.Context, c conn, projectID int64, list []agentline.CampaignContact) error {
	args := []any{projectID, agentline.AnalysisDone}
	for i := range list {
		ct := &list[i]
		if len(ct.Dials) == 0 {
			continue
		}
		last := ct.Dials[len(ct.Dials)-1]
		ct.LastOutcome = &agentline.ContactOutcome{Outcome: last.Outcome}
		if last.CallID != nil {
			ct.LastOutcome.ConversationID = agentline.CallConversationID(*last.CallID)
			args = append(args, ct.LastOutcome.ConversationID)
		}
	}
	if len(args) == 2 {
		return nil
	}
	rows, err := c.query(ctx, `SELECT conversation_id, success, summary FROM conversation_analyses
		WHERE project_id = ? AND status = ? AND conversation_id IN (`+placeholders(len(args)-2)+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	found := map[string]agentline.ContactOutcome{}
	for rows.Next() {
		var o agentline.ContactOutcome
		var success sql.NullBool
		if err := rows.Scan(&o.ConversationID, &success, &o.Summary); err != nil {
			return err
		}
		if success.Valid {
			o.Success = &success.Bool
		}
		found[o.ConversationID] = o
	}
	for i := range list {
		if o := list[i].LastOutcome; o != nil && o.ConversationID != "" {
			if a, ok := found[o.ConversationID]; ok {
				o.Success, o.Summary = a.Success, a.Summary
			}
		}
	}
	return rows.Err()
}
