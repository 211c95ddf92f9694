package store

import (
	"context"
	"database/sql"
	"errors"
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
//
// With an interval, the transaction's last write takes the campaign's
// send slot (next_send_at moves interval ahead, only if it had come, and
// only while the campaign runs): the caller asks the carrier as soon as
// this returns, so the requests of a campaign reach the carrier at least
// interval apart, however long each dial took from its claim to here,
// and from any instance (the slot's row stays locked to the commit). A
// slot not yet come is waited for, the reservation made again then, for
// at most interval plus sendWait; a campaign that stopped running is a
// conflict. Either way nothing is reserved.
func (db *DB) ReserveDialCall(ctx context.Context, call agentline.Call, max int, dialID int64, interval time.Duration) (agentline.Call, error) {
	deadline := time.Now().Add(interval + sendWait)
	for {
		reserved, err := db.reserveDialCall(ctx, call, max, dialID, interval)
		var busy *sendSlotBusy
		if !errors.As(err, &busy) {
			return reserved, err
		}
		wait := time.Until(busy.until)
		if time.Now().Add(wait).After(deadline) {
			return agentline.Call{}, &agentline.Error{Code: agentline.EUnavailable, RetryAfter: 1,
				Message: fmt.Sprintf("campaign dial %d: its campaign's calls are paced further ahead than the dial can wait", dialID)}
		}
		select {
		case <-ctx.Done():
			return agentline.Call{}, ctx.Err()
		case <-time.After(wait + time.Millisecond):
		}
	}
}

// sendWait bounds how much longer than one interval a reservation waits
// for its campaign's send slot: claims are paced at the same interval, so
// a longer wait means the campaign's dials pile up, and the dial is better
// given back.
const sendWait = 5 * time.Second

// sendSlotBusy rolls back a reservation whose campaign's send slot comes
// at until.
type sendSlotBusy struct{ until time.Time }

func (e *sendSlotBusy) Error() string {
	return "the campaign's next send slot comes at " + e.until.String()
}

func (db *DB) reserveDialCall(ctx context.Context, call agentline.Call, max int, dialID int64, interval time.Duration) (agentline.Call, error) {
	return db.reserveCall(ctx, call, max, func(c conn, call agentline.Call) error {
		if interval > 0 { // a busy slot spares the writes below
			if err := db.sendSlotFree(ctx, c, dialID, db.now()); err != nil {
				return err
			}
		}
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
		if interval <= 0 {
			return nil
		}
		now := db.now().UTC().Truncate(time.Microsecond)
		res, err = c.exec(ctx, `UPDATE campaigns SET next_send_at = ? WHERE id = (SELECT campaign_id FROM campaign_dials WHERE id = ?)
			AND status = ? AND (next_send_at IS NULL OR next_send_at <= ?)`, now.Add(interval), dialID, agentline.CampaignRunning, now)
		if n, err := affected(res, err); err != nil || n > 0 {
			return err
		}
		if err := db.sendSlotFree(ctx, c, dialID, now); err != nil {
			return err
		}
		return &sendSlotBusy{until: now} // taken and given back meanwhile: look again
	})
}

// sendSlotFree says why the send slot of a dial's campaign cannot be taken
// at now: the campaign is not running (a conflict), or its slot comes
// later (sendSlotBusy); nil when it can.
func (db *DB) sendSlotFree(ctx context.Context, c conn, dialID int64, now time.Time) error {
	var status string
	var next sql.NullTime
	err := c.queryRow(ctx, `SELECT cp.status, cp.next_send_at FROM campaigns cp JOIN campaign_dials d ON d.campaign_id = cp.id
		WHERE d.id = ?`, dialID).Scan(&status, &next)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return agentline.NotFound("campaign dial")
	case err != nil:
		return err
	case status != agentline.CampaignRunning:
		return agentline.Errorf(agentline.EConflict, "the campaign is %s: its dials are not placed", status)
	case next.Valid && next.Time.After(now):
		return &sendSlotBusy{until: next.Time}
	}
	return nil
}
