package store

import (
	"context"
	"fmt"

	"github.com/agentline/agentline"
)

func scanDoNotCall(row interface{ Scan(...any) error }) (agentline.DoNotCall, error) {
	var e agentline.DoNotCall
	return e, row.Scan(&e.PhoneNumber, &e.Reason, utc(&e.CreatedAt))
}

// AddDoNotCall puts a number (E.164) on the project's do-not-call list and,
// in the same transaction, marks every pending contact of the project's
// campaigns with that number do_not_call, so none of them is dialed. A
// number already on the list stays as it was listed, reason included; it
// is returned with created false.
func (db *DB) AddDoNotCall(ctx context.Context, projectID int64, e agentline.DoNotCall) (agentline.DoNotCall, bool, error) {
	var created bool
	err := db.tx(ctx, func(c conn) error {
		var err error
		if e, created, err = db.listDoNotCall(ctx, c, projectID, e); err != nil || !created {
			return err
		}
		return c.audit(ctx, audited{project: projectID, action: "do_not_call.add", kind: "do_not_call", id: e.PhoneNumber,
			changes: map[string][2]any{"reason": {nil, e.Reason}}})
	})
	return e, created, err
}

// listDoNotCall is AddDoNotCall in the transaction c.
func (db *DB) listDoNotCall(ctx context.Context, c conn, projectID int64, e agentline.DoNotCall) (agentline.DoNotCall, bool, error) {
	now := db.now()
	res, err := c.exec(ctx, `INSERT INTO do_not_call (project_id, phone_number, reason, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (project_id, phone_number) DO NOTHING`, projectID, e.PhoneNumber, e.Reason, now)
	if isForeignKeyViolation(err) {
		return e, false, agentline.NotFound("project")
	}
	if err != nil {
		return e, false, fmt.Errorf("add to do-not-call list: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return e, false, err
	}
	if e, err = scanDoNotCall(c.queryRow(ctx, `SELECT phone_number, reason, created_at FROM do_not_call
		WHERE project_id = ? AND phone_number = ?`, projectID, e.PhoneNumber)); err != nil {
		return e, false, err
	}
	_, err = c.exec(ctx, `UPDATE campaign_contacts SET status = ?, next_attempt_at = NULL, updated_at = ?
		WHERE project_id = ? AND phone_number = ? AND status = ?`,
		agentline.ContactDoNotCall, now, projectID, e.PhoneNumber, agentline.ContactPending)
	return e, n > 0, err
}

// DoNotCallList lists at most limit numbers of the project's do-not-call
// list after the number after ("": from the first), in the order of their
// digits.
func (db *DB) DoNotCallList(ctx context.Context, projectID int64, after string, limit int) ([]agentline.DoNotCall, error) {
	return queryAll(ctx, db.reader(), scanDoNotCall, `SELECT phone_number, reason, created_at FROM do_not_call
		WHERE project_id = ? AND phone_number > ? ORDER BY phone_number LIMIT ?`, projectID, after, limit)
}

// OnDoNotCall reports whether a number is on the project's do-not-call
// list: the check before every dial.
func (db *DB) OnDoNotCall(ctx context.Context, projectID int64, phoneNumber string) (bool, error) {
	var on bool
	err := db.reader().queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM do_not_call WHERE project_id = ? AND phone_number = ?)`,
		projectID, phoneNumber).Scan(&on)
	return on, err
}

// DeleteDoNotCall takes a number off the project's do-not-call list. The
// contacts marked do_not_call stay so: taking a number off the list lets
// later uploads call it, and never calls anyone by surprise.
func (db *DB) DeleteDoNotCall(ctx context.Context, projectID int64, phoneNumber string) error {
	return db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `DELETE FROM do_not_call WHERE project_id = ? AND phone_number = ?`, projectID, phoneNumber)
		if err := mustAffect(res, err, "do-not-call number"); err != nil {
			return err
		}
		return c.audit(ctx, audited{project: projectID, action: "do_not_call.delete", kind: "do_not_call", id: phoneNumber})
	})
}
