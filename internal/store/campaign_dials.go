package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentline/agentline"
)

// The dialing engine's writes: the claim of one dial, its undoing when no
// call could be placed yet, its failure when the carrier refused it, the
// deferral of contacts outside their window, and the end of a dialing
// pass. Each is one transaction, so that instances dialing one campaign
// never make two dials of one attempt nor pass its limits together.

// errClaimRollback rolls a claim back when it cannot dial: the rate slot it
// took is given back with the rest.
var errClaimRollback = errors.New("claim rolled back")

// ClaimDial takes one dial of a contact of a running campaign (see
// agentline.DialClaim): the campaign's rate slot (a conditional UPDATE of
// next_dial_at, which also holds the campaign's row until the commit, so
// that instances claiming together take turns and the live dials they
// count are the truth), the do-not-call check, the contact's move to
// calling with its attempt counted, and the dial's row, which the
// UNIQUE (contact_id, attempt) keeps to one per attempt. A claim that
// cannot dial changes nothing, except that a number found on the
// do-not-call list marks its contact do_not_call.
func (db *DB) ClaimDial(ctx context.Context, cl agentline.DialClaim) (agentline.DialClaimed, error) {
	var out agentline.DialClaimed
	now := cl.Now.UTC().Truncate(time.Microsecond)
	err := db.tx(ctx, func(c conn) error {
		out = agentline.DialClaimed{}
		listed, err := db.markDoNotCall(ctx, c, cl.ProjectID, cl.ContactID, now)
		if err != nil || listed {
			out.Result = agentline.ClaimDoNotCall
			return err
		}
		res, err := c.exec(ctx, `UPDATE campaigns SET next_dial_at = ? WHERE project_id = ? AND id = ? AND status = ? AND next_dial_at <= ?`,
			now.Add(cl.Interval), cl.ProjectID, cl.CampaignID, agentline.CampaignRunning, now)
		if n, err := affected(res, err); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return db.whyNoSlot(ctx, c, cl, &out)
		}
		var calling, max int
		if err := c.queryRow(ctx, `SELECT (SELECT count(*) FROM campaign_contacts WHERE campaign_id = ? AND status = ?), max_concurrent_calls
			FROM campaigns WHERE id = ?`, cl.CampaignID, agentline.ContactCalling, cl.CampaignID).Scan(&calling, &max); err != nil {
			return err
		}
		if calling >= max {
			out.Result = agentline.ClaimFull
			return errClaimRollback
		}
		d := agentline.CampaignDial{CampaignID: cl.CampaignID, ContactID: cl.ContactID, DialedAt: now}
		var source string
		var at sql.NullTime
		err = c.queryRow(ctx, `UPDATE campaign_contacts SET status = ?, attempts = attempts + 1, next_attempt_at = NULL, updated_at = ?
			WHERE project_id = ? AND campaign_id = ? AND id = ? AND status = ? AND next_attempt_at <= ? RETURNING attempts, consent_source, consent_at`,
			agentline.ContactCalling, now, cl.ProjectID, cl.CampaignID, cl.ContactID, agentline.ContactPending, now).Scan(&d.Attempt, &source, &at)
		if errors.Is(err, sql.ErrNoRows) {
			out.Result = agentline.ClaimContactGone
			return errClaimRollback
		}
		if err != nil {
			return err
		}
		d.Consent = consentOf(source, at)
		if err := c.queryRow(ctx, `INSERT INTO campaign_dials (campaign_id, contact_id, project_id, attempt, dialed_at, consent_source, consent_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, cl.CampaignID, cl.ContactID, cl.ProjectID, d.Attempt, now, source, at).Scan(&d.ID); err != nil {
			return fmt.Errorf("log the dial: %w", err)
		}
		out.Result, out.Dial = agentline.Claimed, d
		return nil
	})
	if errors.Is(err, errClaimRollback) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("claim a dial: %w", err)
	}
	return out, nil
}

// markDoNotCall marks the pending contact do_not_call when its number is
// on the project's do-not-call list, and reports whether it is.
func (db *DB) markDoNotCall(ctx context.Context, c conn, projectID, contactID int64, now time.Time) (bool, error) {
	res, err := c.exec(ctx, `UPDATE campaign_contacts SET status = ?, next_attempt_at = NULL, updated_at = ?
		WHERE project_id = ? AND id = ? AND status = ? AND EXISTS (SELECT 1 FROM do_not_call d
			WHERE d.project_id = campaign_contacts.project_id AND d.phone_number = campaign_contacts.phone_number)`,
		agentline.ContactDoNotCall, now, projectID, contactID, agentline.ContactPending)
	n, err := affected(res, err)
	return n > 0, err
}

// whyNoSlot tells a campaign that is not running from one whose next dial
// is not due yet.
func (db *DB) whyNoSlot(ctx context.Context, c conn, cl agentline.DialClaim, out *agentline.DialClaimed) error {
	var status string
	err := c.queryRow(ctx, `SELECT status, next_dial_at FROM campaigns WHERE project_id = ? AND id = ?`, cl.ProjectID, cl.CampaignID).
		Scan(&status, utc(&out.NextDialAt))
	if errors.Is(err, sql.ErrNoRows) || err == nil && status != agentline.CampaignRunning {
		out.Result = agentline.ClaimNotRunning
		return nil
	}
	out.Result = agentline.ClaimSlotBusy
	return err
}

// affected is the number of rows res changed.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// UnclaimDial undoes a claim whose call could not be placed yet (the
// project's live calls are at their cap, the instance is draining): the
// dial row goes, and its contact is pending again on its previous attempt
// count, due at once. A dial that has a call, or an outcome, stays: it was
// placed, or settled meanwhile. It reports whether it undid the claim.
func (db *DB) UnclaimDial(ctx context.Context, projectID, dialID int64) (bool, error) {
	undone := false
	err := db.tx(ctx, func(c conn) error {
		var d agentline.CampaignDial
		err := c.queryRow(ctx, `DELETE FROM campaign_dials WHERE project_id = ? AND id = ? AND call_id IS NULL AND outcome = ''
			RETURNING contact_id, attempt`, projectID, dialID).Scan(&d.ContactID, &d.Attempt)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		now := db.now()
		res, err := c.exec(ctx, `UPDATE campaign_contacts SET status = ?, attempts = attempts - 1, next_attempt_at = ?, updated_at = ?
			WHERE id = ? AND status = ? AND attempts = ?`, agentline.ContactPending, now, now, d.ContactID, agentline.ContactCalling, d.Attempt)
		n, err := affected(res, err)
		undone = n > 0
		return err
	})
	return undone, err
}

// SettleDial settles a dial that placed no call (the carrier refused it,
// or never got it: the call record is gone, or was never made): decide,
// given the dial with its contact and campaign, returns its settlement,
// which is written as a call's end writes it (see SettleCampaignDial). A
// dial that has a call, or was settled, is left alone: its call's end
// settles it. It reports whether it settled the dial.
func (db *DB) SettleDial(ctx context.Context, projectID, dialID int64, decide func(agentline.CampaignCall) (agentline.DialSettlement, bool)) (bool, error) {
	settled := false
	err := db.tx(ctx, func(c conn) error {
		cc, err := campaignCallWhere(ctx, c, `d.project_id = ? AND d.id = ? AND d.call_id IS NULL AND d.outcome = ''`, projectID, dialID)
		if errors.Is(err, agentline.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		s, ok := decide(cc)
		if !ok {
			return nil
		}
		settled = true
		return db.settleDial(ctx, c, db.outboxOn(c), s)
	})
	return settled, err
}

// DueContacts lists up to limit pending contacts of a campaign due at now,
// longest waiting first.
func (db *DB) DueContacts(ctx context.Context, projectID, campaignID int64, now time.Time, limit int) ([]agentline.CampaignContact, error) {
	return queryAll(ctx, db.reader(), scanContact, `SELECT `+contactColumns+` FROM campaign_contacts
		WHERE project_id = ? AND campaign_id = ? AND status = ? AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`,
		projectID, campaignID, agentline.ContactPending, now.UTC(), limit)
}

// DeferContacts moves pending contacts of a campaign to later attempts:
// until maps a contact's id to when its window next opens. Contacts that
// are no longer pending are left as they are.
func (db *DB) DeferContacts(ctx context.Context, projectID, campaignID int64, until map[int64]time.Time) error {
	if len(until) == 0 {
		return nil
	}
	byTime := map[time.Time][]any{}
	for id, t := range until {
		t = t.UTC().Truncate(time.Microsecond)
		byTime[t] = append(byTime[t], id)
	}
	return db.tx(ctx, func(c conn) error {
		for t, ids := range byTime {
			for start := 0; start < len(ids); start += contactBatch {
				batch := ids[start:min(start+contactBatch, len(ids))]
				args := append([]any{t, projectID, campaignID, agentline.ContactPending}, batch...)
				if _, err := c.exec(ctx, `UPDATE campaign_contacts SET next_attempt_at = ? WHERE project_id = ? AND campaign_id = ? AND status = ?
					AND id IN (`+placeholders(len(batch))+`)`, args...); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// RunningCampaigns lists the campaigns that are running, in every
// project, without their counts.
func (db *DB) RunningCampaigns(ctx context.Context) ([]agentline.Campaign, error) {
	return queryAll(ctx, db.reader(), scanCampaign, `SELECT `+campaignColumns+` FROM campaigns WHERE status = ? ORDER BY id`,
		agentline.CampaignRunning)
}

// CampaignsToSweep reports whether the campaign sweep has anything to
// look at: a running campaign, or a contact still calling in any campaign
// (a dial of a paused or cancelled one may need recovery). Both are index
// probes, so asking every sweep interval costs far less than the sweep's
// job.
func (db *DB) CampaignsToSweep(ctx context.Context) (bool, error) {
	var due bool
	// The statuses are written out, not bound: a partial index serves only
	// a query whose condition names its own.
	err := db.reader().queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM campaigns WHERE status = '`+agentline.CampaignRunning+`')
		OR EXISTS (SELECT 1 FROM campaign_contacts WHERE status = '`+agentline.ContactCalling+`')`).Scan(&due)
	return due, err
}

// FinishDialPass ends a pass of the dialing engine over a campaign, in one
// transaction: finish, when not nil, runs first (the DialCampaign job's
// completion, see jobs.CompleteTx, so that a transaction that makes
// contacts due after this look either is seen by it or finds the job
// completed and inserts another); then a running campaign with nobody
// left to call is completed (campaign.completed), or, when wake is set and
// it has contacts due and room for a dial, a DialCampaign job is inserted
// to go on. It reports whether it inserted one.
func (db *DB) FinishDialPass(ctx context.Context, projectID, campaignID int64, now time.Time, wake bool,
	finish func(ctx context.Context, tx *sql.Tx) error) (bool, error) {
	woken := false
	err := db.tx(ctx, func(c conn) error {
		if finish != nil {
			tx, ok := c.q.(*sql.Tx)
			if !ok {
				return errors.New("not in a transaction")
			}
			if err := finish(ctx, tx); err != nil {
				return err
			}
		}
		done, err := db.completeIfDone(ctx, c, db.outboxOn(c), projectID, campaignID)
		if err != nil || done || !wake {
			return err
		}
		woken, err = db.wakeIfDue(ctx, c, db.outboxOn(c), projectID, campaignID, now)
		return err
	})
	return woken, err
}

// completeIfDone completes a running campaign with no contact pending or
// calling, and emits campaign.completed with its final counts; it reports
// whether it did.
func (db *DB) completeIfDone(ctx context.Context, c conn, out agentline.Outbox, projectID, campaignID int64) (bool, error) {
	now := db.now()
	res, err := c.exec(ctx, `UPDATE campaigns SET status = ?, finished_at = ?, updated_at = ?
		WHERE project_id = ? AND id = ? AND status = ? AND NOT EXISTS (SELECT 1 FROM campaign_contacts
			WHERE campaign_id = ? AND status IN (?, ?))`,
		agentline.CampaignCompleted, now, now, projectID, campaignID, agentline.CampaignRunning, campaignID,
		agentline.ContactPending, agentline.ContactCalling)
	if n, err := affected(res, err); err != nil || n == 0 {
		return false, err
	}
	return true, db.emitCampaign(ctx, c, out, agentline.EventCampaignCompleted, projectID, campaignID)
}

// wakeIfDue inserts a DialCampaign job for a running campaign that has
// contacts due at now and room for a dial; it reports whether it did.
func (db *DB) wakeIfDue(ctx context.Context, c conn, out agentline.Outbox, projectID, campaignID int64, now time.Time) (bool, error) {
	var due bool
	err := c.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM campaigns cp WHERE cp.project_id = ? AND cp.id = ? AND cp.status = ?
		AND EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = cp.id AND status = ? AND next_attempt_at <= ?)
		AND (SELECT count(*) FROM campaign_contacts WHERE campaign_id = cp.id AND status = ?) < cp.max_concurrent_calls)`,
		projectID, campaignID, agentline.CampaignRunning, agentline.ContactPending, now.UTC(), agentline.ContactCalling).Scan(&due)
	if err != nil || !due {
		return false, err
	}
	return true, out.Enqueue(ctx, agentline.DialCampaign{ProjectID: projectID, CampaignID: campaignID})
}

// emitCampaign emits a campaign event of typ with the campaign and its
// counts as the transaction c sees them.
func (db *DB) emitCampaign(ctx context.Context, c conn, out agentline.Outbox, typ string, projectID, campaignID int64) error {
	return db.emitCampaignWith(ctx, c, out, projectID, campaignID, func(cp agentline.Campaign) (agentline.Event, error) {
		return agentline.NewCampaignEvent(typ, cp)
	})
}

// emitCampaignWith emits the event build makes of the campaign with its
// counts as the transaction c sees them.
func (db *DB) emitCampaignWith(ctx context.Context, c conn, out agentline.Outbox, projectID, campaignID int64,
	build func(agentline.Campaign) (agentline.Event, error)) error {
	cp, err := campaignIn(ctx, c, projectID, campaignID)
	if err != nil {
		return err
	}
	e, err := build(cp)
	if err != nil {
		return err
	}
	return out.Emit(ctx, e)
}

// settleDial writes a settlement in c: the contact first (only while it is
// on the dial's attempt, in the status the settlement was decided from),
// then the dial's outcome, the event of a final contact, and the
// campaign's completion or its next wake.
func (db *DB) settleDial(ctx context.Context, c conn, out agentline.Outbox, s agentline.DialSettlement) error {
	if !slices.Contains([]string{agentline.ContactCalling, agentline.ContactOptedOut, agentline.ContactDoNotCall}, s.From) {
		return fmt.Errorf("settle dial %d: a contact in status %q has no dial to settle", s.DialID, s.From)
	}
	now := db.now()
	res, err := c.exec(ctx, `UPDATE campaign_contacts SET status = ?, next_attempt_at = ?, updated_at = ?
		WHERE project_id = ? AND id = ? AND attempts = ? AND status = ?`,
		s.Status, s.NextAttemptAt, now, s.ProjectID, s.ContactID, s.Attempt, s.From)
	if n, err := affected(res, err); err != nil || n == 0 {
		return err
	}
	// A request still unanswered is over too: its call ended, or recovery
	// found the carrier never got it.
	if _, err := c.exec(ctx, `UPDATE campaign_dials SET outcome = ?,
		request_until = CASE WHEN request_until > ? THEN ? ELSE request_until END WHERE project_id = ? AND id = ?`,
		s.Outcome, now, now, s.ProjectID, s.DialID); err != nil {
		return err
	}
	if s.Final() {
		ct, err := scanContact(c.queryRow(ctx, `SELECT `+contactColumns+` FROM campaign_contacts WHERE id = ?`, s.ContactID))
		if err != nil {
			return err
		}
		e, err := agentline.NewContactCompletedEvent(ct, s.Outcome, s.ConversationID)
		if err != nil {
			return err
		}
		if err := out.Emit(ctx, e); err != nil {
			return err
		}
	}
	done, err := db.completeIfDone(ctx, c, out, s.ProjectID, s.CampaignID)
	if err != nil || done {
		return err
	}
	_, err = db.wakeIfDue(ctx, c, out, s.ProjectID, s.CampaignID, now)
	return err
}
