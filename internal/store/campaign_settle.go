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
// With an interval, the transaction also takes the campaign's next send
// slot (takeSendSlot), and ReserveDialCall returns at that slot: the
// caller asks the carrier at once, so a campaign's requests reach the
// carrier at least interval apart, however long each dial took from its
// claim to here, and from any instance, and never more than the
// campaign's calls per second of them can create their calls within one
// second there, however late the carrier gets to any (clearOfRequests).
// The caller records the answer with AttachCallSID. A campaign that stopped running
// is a conflict, and one whose slots are taken further ahead than
// interval plus sendWait is unavailable: nothing is reserved. A
// reservation that returns later than sendLate after its slot (its
// commit was slow) takes another slot and waits for it, so that a late
// request is not bunched with the next one's.
func (db *DB) ReserveDialCall(ctx context.Context, call agentline.Call, max int, dialID int64, interval time.Duration) (agentline.Call, error) {
	var slot time.Time
	reserved, err := db.reserveCall(ctx, call, max, func(c conn, call agentline.Call) error {
		if err := linkDialCall(ctx, c, call, dialID); err != nil || interval <= 0 {
			return err
		}
		var err error
		slot, err = db.takeSendSlot(ctx, c, dialID, interval, true)
		return err
	})
	if err != nil || interval <= 0 {
		return reserved, err
	}
	for range 10 {
		if wait := time.Until(slot); wait > 0 {
			select {
			case <-ctx.Done():
				return reserved, nil // the caller's context ends its request too
			case <-time.After(wait):
			}
		}
		if time.Since(slot) <= sendLate {
			break
		}
		if err := db.tx(ctx, func(c conn) error {
			slot, err = db.takeSendSlot(ctx, c, dialID, interval, false)
			return err
		}); err != nil {
			break // sent late rather than not at all: its record is reserved
		}
	}
	return reserved, nil
}

// sendWait bounds how much further ahead than one interval a dial's send
// slot may be: claims are paced at the same interval, so slots further
// ahead mean the campaign's dials pile up, and the dial is better given
// back.
const sendWait = 5 * time.Second

// sendLate is how long after its send slot a request may still go out;
// one later takes another slot. The engine's paceMargin leaves room for
// this much, and for the request's own way to the carrier.
const sendLate = 10 * time.Millisecond

// takeSendSlot gives the dial's campaign's next send slot, at now or when
// the last one taken ends, and moves the campaign's next_send_at interval
// past it. The slot is also clear of the campaign's other requests
// (clearOfRequests), and the dial's request counts as unanswered from
// here (request_until). The campaign's row is locked to the commit
// (PostgreSQL; SQLite has one writer), so instances take slots one after
// the other. With running set, a campaign that is not running is a
// conflict.
func (db *DB) takeSendSlot(ctx context.Context, c conn, dialID int64, interval time.Duration, running bool) (time.Time, error) {
	lock := ""
	if db.dialect == Postgres {
		lock = " FOR UPDATE OF cp"
	}
	var id int64
	var status string
	var next sql.NullTime
	var cps float64
	err := c.queryRow(ctx, `SELECT cp.id, cp.status, cp.next_send_at, cp.calls_per_second FROM campaigns cp
		JOIN campaign_dials d ON d.campaign_id = cp.id WHERE d.id = ?`+lock, dialID).Scan(&id, &status, &next, &cps)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, agentline.NotFound("campaign dial")
	}
	if err != nil {
		return time.Time{}, err
	}
	if running && status != agentline.CampaignRunning {
		return time.Time{}, agentline.Errorf(agentline.EConflict, "the campaign is %s: its dials are not placed", status)
	}
	now := db.now()
	slot := now
	if next.Valid && next.Time.After(now) {
		slot = next.Time.UTC()
	}
	if slot, err = clearOfRequests(ctx, c, id, dialID, cps, slot); err != nil {
		return time.Time{}, err
	}
	if slot.Sub(now) > interval+sendWait {
		return time.Time{}, &agentline.Error{Code: agentline.EUnavailable, RetryAfter: 1,
			Message: fmt.Sprintf("campaign dial %d: its campaign's calls are paced further ahead than the dial can wait", dialID)}
	}
	if _, err = c.exec(ctx, `UPDATE campaigns SET next_send_at = ? WHERE id = ?`, slot.Add(interval), id); err != nil {
		return time.Time{}, err
	}
	_, err = c.exec(ctx, `UPDATE campaign_dials SET request_until = ? WHERE id = ?`, requestOpen(), dialID)
	return slot, err
}

// clearOfRequests returns the earliest time from slot at which a request
// sent would make no more than calls_per_second of the campaign's
// requests able to create their calls within one second at the carrier.
// The carrier counts a call when it creates it, which is some time
// between the request's sending and its answer: late by the request's
// whole latency when the carrier is slow (a request it holds for seconds
// creates its call amid later ones). So a request counts against a new
// one sent at slot while its answer has not come (request_until is the
// far future: it may create its call at any time) or came within the
// second before slot. Then any one second at the carrier holds at most
// the limit: of the requests whose calls it created in that second, the
// last to take its slot counted all the others, which were taken before
// it and answered no earlier than their calls were created, within the
// second before its slot. Requests without answer to the limit make the
// dial unavailable: recovery answers them (with the carrier's list). One
// claimed more than requestOpenFor ago is no longer counted: recovery
// does not look for it (its contact moved on), and it must not hold the
// campaign's pace back for ever.
func clearOfRequests(ctx context.Context, c conn, campaignID, dialID int64, cps float64, slot time.Time) (time.Time, error) {
	limit := max(1, int(cps))
	open, err := queryAll(ctx, c, func(r interface{ Scan(...any) error }) (time.Time, error) {
		var t time.Time
		return t, r.Scan(utc(&t))
	}, `SELECT request_until FROM campaign_dials WHERE campaign_id = ? AND request_until > ? AND id <> ?
		AND (request_until < ? OR dialed_at > ?) ORDER BY request_until`,
		campaignID, slot.Add(-time.Second), dialID, requestOpen(), slot.Add(-requestOpenFor))
	if err != nil || len(open) < limit {
		return slot, err
	}
	edge := open[len(open)-limit]
	if !edge.Before(requestOpen()) {
		return time.Time{}, &agentline.Error{Code: agentline.EUnavailable, RetryAfter: 1,
			Message: fmt.Sprintf("campaign dial %d: %d of its campaign's requests to the carrier have no answer yet", dialID, limit)}
	}
	return edge.Add(time.Second), nil
}

// requestOpenFor bounds how long after its claim a request without an
// answer counts against its campaign's pace: well past the carrier
// client's timeout and the engine's recovery, which answer it sooner.
const requestOpenFor = 15 * time.Minute

// requestOpen is request_until of a dial whose request has no answer yet.
func requestOpen() time.Time { return time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC) }

// answeredRequest records in c that the request of the dial of call
// callID (if any) has its answer: its call was created at the carrier by
// now, if at all.
func (db *DB) answeredRequest(ctx context.Context, c conn, callID int64) error {
	_, err := c.exec(ctx, `UPDATE campaign_dials SET request_until = ? WHERE call_id = ? AND request_until IS NOT NULL`, db.now(), callID)
	return err
}

// linkDialCall links a reserved call to its dial and contact, and gives
// it the dial's campaign, contact and variables.
func linkDialCall(ctx context.Context, c conn, call agentline.Call, dialID int64) error {
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
}
