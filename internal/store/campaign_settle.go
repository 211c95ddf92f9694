package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// A campaign call's link to its dial, and the settlement of the dial when
// the call ends: in the transaction that ends the call (package
// conversation decides, through agentline.ConversationTx), or in the
// engine's own when no call was placed.

// campaignCallWhere reads the dial that where selects (on campaign_dials d)
// with its contact and campaign; on PostgreSQL the contact's row is locked
// until c ends, so that two ends of one call (a status callback and the
// relay's end) settle its dial once.
func campaignCallWhere(ctx context.Context, c conn, where string, args ...any) (agentline.CampaignCall, error) {
	var cc agentline.CampaignCall
	d, err := scanDial(c.queryRow(ctx, `SELECT `+dialColumnsD+` FROM campaign_dials d WHERE `+where, args...))
	if err != nil {
		return cc, notFound(err, "campaign dial")
	}
	lock := ""
	if c.db.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	ct, err := scanContact(c.queryRow(ctx, `SELECT `+contactColumns+` FROM campaign_contacts WHERE id = ?`+lock, d.ContactID))
	if err != nil {
		return cc, notFound(err, "campaign contact")
	}
	cp, err := scanCampaign(c.queryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE id = ?`, d.CampaignID))
	if err != nil {
		return cc, notFound(err, "campaign")
	}
	cc.Campaign, cc.Contact, cc.Dial = cp, ct, d
	return cc, nil
}

// dialColumnsD is dialColumns of campaign_dials aliased d.
const dialColumnsD = `d.id, d.campaign_id, d.contact_id, d.attempt, d.call_id, d.dialed_at, d.consent_source, d.consent_at, d.outcome`

// CampaignCall implements agentline.ConversationTx: the dial of the call.
func (t *convTx) CampaignCall(ctx context.Context, projectID, callID int64) (agentline.CampaignCall, error) {
	return campaignCallWhere(ctx, t.c, `d.project_id = ? AND d.call_id = ?`, projectID, callID)
}

// SettleCampaignDial implements agentline.ConversationTx.
func (t *convTx) SettleCampaignDial(ctx context.Context, s agentline.DialSettlement) error {
	return t.db.settleDial(ctx, t.c, t, s)
}

// CampaignCallOf returns the campaign dial that placed the call callID,
// with its contact and campaign; not found for a call no campaign placed.
func (db *DB) CampaignCallOf(ctx context.Context, projectID, callID int64) (agentline.CampaignCall, error) {
	return campaignCallWhere(ctx, db.reader(), `d.project_id = ? AND d.call_id = ?`, projectID, callID)
}

// MarkMessageLeft records on a live dial that a message is being left on
// the machine that answered it (its outcome becomes voicemail before the
// call ends, which settles it without a retry). It reports whether it
// did: not when the dial has an outcome already (its call ended), or its
// contact is no longer calling on its attempt.
func (db *DB) MarkMessageLeft(ctx context.Context, projectID, dialID int64) (bool, error) {
	res, err := db.writer().exec(ctx, `UPDATE campaign_dials SET outcome = ? WHERE project_id = ? AND id = ? AND outcome = ''
		AND EXISTS (SELECT 1 FROM campaign_contacts ct WHERE ct.id = campaign_dials.contact_id AND ct.status = ?
			AND ct.attempts = campaign_dials.attempt)`, agentline.ContactVoicemail, projectID, dialID, agentline.ContactCalling)
	n, err := affected(res, err)
	return n > 0, err
}

// UnmarkMessageLeft takes MarkMessageLeft back when the message could not
// be left, unless the call has ended (and settled the dial) meanwhile.
func (db *DB) UnmarkMessageLeft(ctx context.Context, projectID, dialID int64) error {
	_, err := db.writer().exec(ctx, `UPDATE campaign_dials SET outcome = '' WHERE project_id = ? AND id = ? AND outcome = ?
		AND EXISTS (SELECT 1 FROM campaign_contacts ct WHERE ct.id = campaign_dials.contact_id AND ct.status = ?
			AND ct.attempts = campaign_dials.attempt)`, projectID, dialID, agentline.ContactVoicemail, agentline.ContactCalling)
	return err
}

// StaleDials lists up to limit dials of live campaigns (running, paused or
// cancelled) made before before whose call never reached the carrier's
// books: the dial has no call (its instance died between the claim and
// the call's reservation), or its call still has a placeholder SID (the
// instance died, or the carrier did not answer, between the reservation
// and the carrier's answer). Their contacts are still calling on them.
// Each comes with its call's SID, numbers and reservation time, when it
// has a call.
func (db *DB) StaleDials(ctx context.Context, before time.Time, limit int) ([]agentline.StaleDial, error) {
	q := `SELECT ` + dialColumnsD + `, d.project_id, cl.call_sid, cl.from_number, cl.to_number, cl.created_at
		FROM campaigns cp
		JOIN campaign_contacts ct ON ct.campaign_id = cp.id AND ct.status = ?
		JOIN campaign_dials d ON d.contact_id = ct.id AND d.attempt = ct.attempts
		LEFT JOIN calls cl ON cl.id = d.call_id
		WHERE cp.status IN (?, ?, ?) AND d.outcome = '' AND d.dialed_at < ?
			AND (d.call_id IS NULL OR cl.call_sid LIKE 'pending:%' AND cl.status IN (?, ?, ?, ?))
		ORDER BY d.id LIMIT ?`
	return queryAll(ctx, db.reader(), scanStaleDial, q, agentline.ContactCalling,
		agentline.CampaignRunning, agentline.CampaignPaused, agentline.CampaignCancelled, before.UTC(),
		agentline.CallQueued, agentline.CallInitiated, agentline.CallRinging, agentline.CallInProgress, limit)
}

// scanStaleDial scans a row of StaleDials.
func scanStaleDial(row interface{ Scan(...any) error }) (agentline.StaleDial, error) {
	var s agentline.StaleDial
	var call sql.NullInt64
	var source string
	var at, created sql.NullTime
	var sid, from, to sql.NullString
	d := &s.Dial
	err := row.Scan(&d.ID, &d.CampaignID, &d.ContactID, &d.Attempt, &call, utc(&d.DialedAt), &source, &at, &d.Outcome,
		&s.ProjectID, &sid, &from, &to, &created)
	if err != nil {
		return s, err
	}
	d.Consent = consentOf(source, at)
	if call.Valid {
		d.CallID = &call.Int64
		s.CallSID, s.From, s.To, s.ReservedAt = sid.String, from.String, to.String, created.Time.UTC()
	}
	return s, nil
}

// ReserveDialCall is ReserveCall for a campaign's dial: in the same
// transaction, the reserved call is linked to the dial (campaign_dials.
// call_id) and its contact (last_call_id), and carries the campaign, the
// contact and the contact's variables. A dial that has a call or an
// outcome already (settled by the engine's recovery meanwhile) is a
// conflict and nothing is reserved, so that the carrier is never asked
// for a call of an attempt given up.
func (db *DB) ReserveDialCall(ctx context.Context, call agentline.Call, max int, dialID int64) (agentline.Call, error) {
	return db.reserveCall(ctx, call, max, func(c conn, call agentline.Call) error {
		res, err := c.exec(ctx, `UPDATE campaign_dials SET call_id = ? WHERE project_id = ? AND id = ? AND call_id IS NULL AND outcome = ''`,
			call.ID, call.ProjectID, dialID)
		if n, err := affected(res, err); err != nil || n == 0 {
			if err == nil {
				err = agentline.Errorf(agentline.EConflict, "campaign dial %d has a call or an outcome already", dialID)
			}
			return err
		}
		if _, err := c.exec(ctx, `UPDATE campaign_contacts SET last_call_id = ? WHERE id = (SELECT contact_id FROM campaign_dials WHERE id = ?)`,
			call.ID, dialID); err != nil {
			return err
		}
		_, err = c.exec(ctx, `UPDATE calls SET campaign_id = (SELECT campaign_id FROM campaign_dials WHERE id = ?),
			contact_id = (SELECT contact_id FROM campaign_dials WHERE id = ?),
			variables = (SELECT ct.variables FROM campaign_dials d JOIN campaign_contacts ct ON ct.id = d.contact_id WHERE d.id = ?)
			WHERE id = ?`, dialID, dialID, dialID, call.ID)
		if err != nil {
			return fmt.Errorf("link call %d to dial %d: %w", call.ID, dialID, err)
		}
		return nil
	})
}
