package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentline/agentline"
)

const campaignColumns = `id, project_id, agent_id, name, status, calling_window, max_concurrent_calls, calls_per_second,
	max_attempts, retry_after_ms, voicemail, next_dial_at, created_at, updated_at, started_at, finished_at`

func scanCampaign(row interface{ Scan(...any) error }) (agentline.Campaign, error) {
	var c agentline.Campaign
	var window, voicemail string
	var retryMS int64
	var started, finished sql.NullTime
	err := row.Scan(&c.ID, &c.ProjectID, &c.AgentID, &c.Name, &c.Status, &window, &c.MaxConcurrentCalls, &c.CallsPerSecond,
		&c.MaxAttempts, &retryMS, &voicemail, utc(&c.NextDialAt), utc(&c.CreatedAt), utc(&c.UpdatedAt), &started, &finished)
	if err != nil {
		return c, err
	}
	c.RetryAfter = time.Duration(retryMS) * time.Millisecond
	c.StartedAt, c.FinishedAt = nullTime(started), nullTime(finished)
	if err := json.Unmarshal([]byte(window), &c.CallingWindow); err != nil {
		return c, fmt.Errorf("campaign %d calling_window: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(voicemail), &c.Voicemail); err != nil {
		return c, fmt.Errorf("campaign %d voicemail: %w", c.ID, err)
	}
	return c, nil
}

// campaignJSON is a campaign's window and voicemail as their columns hold
// them.
func campaignJSON(c agentline.Campaign) (window, voicemail string, err error) {
	w, err := json.Marshal(c.CallingWindow)
	if err != nil {
		return "", "", err
	}
	v, err := json.Marshal(c.Voicemail)
	return string(w), string(v), err
}

// CreateCampaign stores a new campaign of c.ProjectID as a draft. The
// caller has checked that its agent is one of the project's.
func (db *DB) CreateCampaign(ctx context.Context, c agentline.Campaign) (agentline.Campaign, error) {
	window, voicemail, err := campaignJSON(c)
	if err != nil {
		return c, err
	}
	now := db.now()
	var id int64
	err = db.tx(ctx, func(tx conn) error {
		if err := tx.queryRow(ctx, `INSERT INTO campaigns (project_id, agent_id, name, status, calling_window, max_concurrent_calls,
			calls_per_second, max_attempts, retry_after_ms, voicemail, next_dial_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			c.ProjectID, c.AgentID, c.Name, agentline.CampaignDraft, window, c.MaxConcurrentCalls, c.CallsPerSecond, c.MaxAttempts,
			c.RetryAfter.Milliseconds(), voicemail, now, now, now).Scan(&id); err != nil {
			return err
		}
		created, err := campaignOn(ctx, tx, c.ProjectID, id)
		if err != nil {
			return err
		}
		return tx.audit(ctx, change(c.ProjectID, "campaign.create", "campaign", id, campaignChanges(nil, &created)))
	})
	if isForeignKeyViolation(err) {
		return c, agentline.NotFound("agent")
	}
	if err != nil {
		return c, fmt.Errorf("create campaign: %w", err)
	}
	return db.Campaign(ctx, c.ProjectID, id)
}

// Campaign returns a campaign of the project with its contacts counted by
// status, both read at one moment (readTx).
func (db *DB) Campaign(ctx context.Context, projectID, id int64) (agentline.Campaign, error) {
	return readIn(ctx, db, func(c conn) (agentline.Campaign, error) { return campaignIn(ctx, c, projectID, id) })
}

// campaignIn is Campaign read on c.
func campaignIn(ctx context.Context, c conn, projectID, id int64) (agentline.Campaign, error) {
	cp, err := scanCampaign(c.queryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE project_id = ? AND id = ?`, projectID, id))
	if err != nil {
		return cp, notFound(err, "campaign")
	}
	list := []agentline.Campaign{cp}
	if err := countContactsIn(ctx, c, list); err != nil {
		return cp, err
	}
	return list[0], nil
}

// Campaigns lists at most limit campaigns of the project after the one
// with id after (0: from the first), in the order they were made, each
// with its contacts counted by status, all read at one moment.
func (db *DB) Campaigns(ctx context.Context, projectID, after int64, limit int) ([]agentline.Campaign, error) {
	return readIn(ctx, db, func(c conn) ([]agentline.Campaign, error) {
		list, err := queryAll(ctx, c, scanCampaign, `SELECT `+campaignColumns+` FROM campaigns
			WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?`, projectID, after, limit)
		if err != nil {
			return nil, err
		}
		return list, countContactsIn(ctx, c, list)
	})
}

// countContactsIn fills the Counts of each campaign of list (at most a
// page) in one query on c, which reads the contacts' pick index only.
func countContactsIn(ctx context.Context, c conn, list []agentline.Campaign) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]any, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	rows, err := c.query(ctx, `SELECT campaign_id, status, count(*) FROM campaign_contacts
		WHERE campaign_id IN (`+placeholders(len(ids))+`) GROUP BY campaign_id, status`, ids...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var status string
		var n int
		if err := rows.Scan(&id, &status, &n); err != nil {
			return err
		}
		if i := slices.IndexFunc(list, func(c agentline.Campaign) bool { return c.ID == id }); i >= 0 {
			list[i].Counts.Add(status, n)
		}
	}
	return rows.Err()
}

// UpdateCampaign saves c's name, agent, window, limits, retry and
// voicemail settings. The agent changes only while the campaign is a
// draft: a campaign that left draft meanwhile and was asked for another
// agent is a conflict, so no call of a started campaign ever goes out
// from another agent than the one it started with. The contacts of a
// started campaign that wait for a later attempt are due again as early as
// the new retry setting allows (redueContacts), so that a new window or
// retry_after applies to them at once.
func (db *DB) UpdateCampaign(ctx context.Context, c agentline.Campaign) (agentline.Campaign, error) {
	return db.UpdateCampaignChecked(ctx, c, nil)
}

// UpdateCampaignChecked is UpdateCampaign with check, when not nil, run in
// its transaction, after the change, on the campaign's contacts still to
// be dialed (pending or calling: a call that is retried waits again),
// with their number and timezone: an error from it undoes the change and
// is returned. A contacts upload that comes meanwhile waits for the
// change (see AddContactsChecked), so check sees every contact the new
// settings apply to.
func (db *DB) UpdateCampaignChecked(ctx context.Context, c agentline.Campaign, check func([]agentline.CampaignContact) error) (agentline.Campaign, error) {
	window, voicemail, err := campaignJSON(c)
	if err != nil {
		return c, err
	}
	noAgent := false
	err = db.tx(ctx, func(tx conn) error {
		before, err := campaignOn(ctx, tx, c.ProjectID, c.ID)
		if err != nil {
			return err
		}
		res, err := tx.exec(ctx, `UPDATE campaigns SET name = ?, agent_id = ?, calling_window = ?, max_concurrent_calls = ?,
			calls_per_second = ?, max_attempts = ?, retry_after_ms = ?, voicemail = ?, updated_at = ?
			WHERE project_id = ? AND id = ? AND (status = ? OR agent_id = ?)`,
			c.Name, c.AgentID, window, c.MaxConcurrentCalls, c.CallsPerSecond, c.MaxAttempts, c.RetryAfter.Milliseconds(), voicemail,
			db.now(), c.ProjectID, c.ID, agentline.CampaignDraft, c.AgentID)
		if isForeignKeyViolation(err) {
			noAgent = true
			return agentline.NotFound("agent")
		}
		if err := mustAffect(res, err, "campaign"); err != nil {
			return err
		}
		if check != nil {
			waiting, err := queryAll(ctx, tx, scanContactNumber, `SELECT phone_number, timezone FROM campaign_contacts
				WHERE campaign_id = ? AND status IN (?, ?) ORDER BY id`, c.ID, agentline.ContactPending, agentline.ContactCalling)
			if err != nil {
				return err
			}
			if err := check(waiting); err != nil {
				return err
			}
		}
		after, err := campaignOn(ctx, tx, c.ProjectID, c.ID)
		if err != nil {
			return err
		}
		if err := tx.audit(ctx, change(c.ProjectID, "campaign.update", "campaign", c.ID, campaignChanges(&before, &after))); err != nil {
			return err
		}
		return db.redueContacts(ctx, tx, c.ProjectID, c.ID, c.RetryAfter)
	})
	if errors.Is(err, agentline.ErrNotFound) && !noAgent {
		if cur, gerr := db.Campaign(ctx, c.ProjectID, c.ID); gerr == nil {
			return cur, agentline.Errorf(agentline.EConflict, "the campaign is %s: only a draft campaign's agent can change", cur.Status)
		}
	}
	if err != nil {
		return c, err
	}
	return db.Campaign(ctx, c.ProjectID, c.ID)
}

// scanContactNumber scans a contact's phone_number and timezone.
func scanContactNumber(r interface{ Scan(...any) error }) (agentline.CampaignContact, error) {
	var ct agentline.CampaignContact
	return ct, r.Scan(&ct.PhoneNumber, &ct.Timezone)
}

// DeleteCampaign deletes a campaign of the project with its contacts and
// dials; the calls it made stay, unlinked. A running campaign is a
// conflict: it has calls in flight, and pausing or cancelling it first
// says what becomes of them.
func (db *DB) DeleteCampaign(ctx context.Context, projectID, id int64) error {
	err := db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `DELETE FROM campaigns WHERE project_id = ? AND id = ? AND status <> ?`,
			projectID, id, agentline.CampaignRunning)
		if err := mustAffect(res, err, "campaign"); err != nil {
			return err
		}
		return c.audit(ctx, change(projectID, "campaign.delete", "campaign", id, nil))
	})
	if err != nil {
		if _, gerr := db.Campaign(ctx, projectID, id); gerr == nil {
			return agentline.Errorf(agentline.EConflict, "the campaign is running; pause or cancel it before deleting it")
		}
		return err
	}
	return nil
}

// TransitionCampaign moves a campaign of the project from one of the
// statuses from to status to, in one conditional UPDATE, so that two
// requests (or instances) racing on it cannot both move it. Entering
// running the first time sets started_at; entering completed or cancelled
// sets finished_at. It returns the campaign and whether it moved: when it
// did not, the campaign as it is, whose status says why.
//
// Entering running inserts, in the same transaction, the DialCampaign job
// that starts dialing, and the first start (from draft) emits
// campaign.started. Cancelling leaves the contacts as they are: pending
// ones stay pending and are never dialed, since only running campaigns
// dial; calls in flight end as they would.
func (db *DB) TransitionCampaign(ctx context.Context, projectID, id int64, from []string, to string) (agentline.Campaign, bool, error) {
	moved := false
	err := db.tx(ctx, func(c conn) error {
		lock := ""
		if db.dialect == Postgres {
			lock = " FOR UPDATE"
		}
		var was string
		err := c.queryRow(ctx, `SELECT status FROM campaigns WHERE project_id = ? AND id = ?`+lock, projectID, id).Scan(&was)
		if err != nil || !slices.Contains(from, was) {
			return notFound(err, "campaign")
		}
		now := db.now()
		final := to == agentline.CampaignCompleted || to == agentline.CampaignCancelled
		if _, err := c.exec(ctx, `UPDATE campaigns SET status = ?, updated_at = ?,
			started_at = CASE WHEN ? THEN COALESCE(started_at, ?) ELSE started_at END,
			finished_at = CASE WHEN ? THEN ? ELSE finished_at END
			WHERE project_id = ? AND id = ?`, to, now, to == agentline.CampaignRunning, now, final, now, projectID, id); err != nil {
			return err
		}
		moved = true
		if err := c.audit(ctx, change(projectID, campaignAction(was, to), "campaign", id,
			map[string][2]any{"status": {was, to}})); err != nil || to != agentline.CampaignRunning {
			return err
		}
		out := db.outboxOn(c)
		if was == agentline.CampaignDraft {
			if err := db.emitCampaign(ctx, c, out, agentline.EventCampaignStarted, projectID, id); err != nil {
				return err
			}
		}
		return out.Enqueue(ctx, agentline.DialCampaign{ProjectID: projectID, CampaignID: id})
	})
	if err != nil {
		return agentline.Campaign{}, false, err
	}
	cp, err := db.Campaign(ctx, projectID, id)
	return cp, moved && err == nil, err
}

// campaignOn reads a campaign of the project in a transaction's conn,
// without its contact counts.
func campaignOn(ctx context.Context, c conn, projectID, id int64) (agentline.Campaign, error) {
	cp, err := scanCampaign(c.queryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE project_id = ? AND id = ?`, projectID, id))
	return cp, notFound(err, "campaign")
}

// campaignAction names a campaign's move from was to to in the audit log.
func campaignAction(was, to string) string {
	switch {
	case to == agentline.CampaignRunning && was == agentline.CampaignDraft:
		return "campaign.start"
	case to == agentline.CampaignRunning:
		return "campaign.resume"
	case to == agentline.CampaignPaused:
		return "campaign.pause"
	case to == agentline.CampaignCancelled:
		return "campaign.cancel"
	}
	return "campaign." + to
}

// campaignChanges is AuditChanges of a campaign's settings, without the
// contact counts its JSON carries (which its settings do not change).
func campaignChanges(before, after *agentline.Campaign) map[string][2]any {
	var changes map[string][2]any
	if before == nil {
		changes = agentline.AuditChanges(nil, after)
	} else {
		changes = agentline.AuditChanges(before, after)
	}
	delete(changes, "counts")
	return changes
}
