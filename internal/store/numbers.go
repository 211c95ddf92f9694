package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentline/agentline"
)

const numberColumns = `id, project_id, phone_number, agent_id, status, carrier_sid, created_at, updated_at`

func scanNumber(row interface{ Scan(...any) error }) (agentline.PhoneNumber, error) {
	var n agentline.PhoneNumber
	var agentID sql.NullInt64
	err := row.Scan(&n.ID, &n.ProjectID, &n.PhoneNumber, &agentID, &n.Status, &n.CarrierSID, utc(&n.CreatedAt), utc(&n.UpdatedAt))
	if agentID.Valid {
		n.AgentID = &agentID.Int64
	}
	return n, err
}

// numberConflict explains a unique violation on phone_numbers: either the
// number is already provisioned, or the agent already has one.
func numberConflict(ctx context.Context, c conn, n agentline.PhoneNumber) error {
	if n.AgentID != nil {
		var other string
		err := c.queryRow(ctx, `SELECT phone_number FROM phone_numbers WHERE agent_id = ? AND id <> ?`, *n.AgentID, n.ID).Scan(&other)
		if err == nil {
			return agentline.Errorf(agentline.EConflict,
				"agent %d already has phone number %s; an agent has one number: release or unlink that one first", *n.AgentID, other)
		}
	}
	return agentline.Errorf(agentline.EConflict, "phone number %s is already provisioned", n.PhoneNumber)
}

// checkNumberAgent makes sure the agent a number links to is in the
// number's project, so that no number can point into another tenant.
func checkNumberAgent(ctx context.Context, c conn, n agentline.PhoneNumber) error {
	if n.AgentID == nil {
		return nil
	}
	var one int
	err := c.queryRow(ctx, `SELECT 1 FROM agents WHERE id = ? AND project_id = ?`, *n.AgentID, n.ProjectID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return agentline.Invalid("agent_id", "agent %d is not in this project", *n.AgentID)
	}
	return err
}

// CreatePhoneNumber stores a number bought for n.ProjectID. A number already
// stored, or an agent that already has one, is a conflict.
func (db *DB) CreatePhoneNumber(ctx context.Context, n agentline.PhoneNumber) (agentline.PhoneNumber, error) {
	n.CreatedAt, n.UpdatedAt = db.now(), db.now()
	err := db.tx(ctx, func(c conn) error {
		if err := checkNumberAgent(ctx, c, n); err != nil {
			return err
		}
		err := c.queryRow(ctx,
			`INSERT INTO phone_numbers (project_id, agent_id, phone_number, status, carrier_sid, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			n.ProjectID, n.AgentID, n.PhoneNumber, n.Status, n.CarrierSID, n.CreatedAt, n.UpdatedAt).Scan(&n.ID)
		if isUniqueViolation(err) {
			return errUniqueNumber
		}
		if err != nil {
			return err
		}
		if err := c.audit(ctx, change(n.ProjectID, "number.create", "number", n.ID, agentline.AuditChanges(nil, n))); err != nil {
			return err
		}
		return db.emitNumber(ctx, c, agentline.EventNumberProvisioned, n)
	})
	if errors.Is(err, errUniqueNumber) {
		return n, numberConflict(ctx, db.reader(), n)
	}
	if isForeignKeyViolation(err) {
		return n, agentline.NotFound("project")
	}
	if err != nil {
		return n, fmt.Errorf("create phone number: %w", err)
	}
	return n, nil
}

// errUniqueNumber leaves the transaction (whose connection is the only
// writer on SQLite) before the conflict is explained with a read.
var errUniqueNumber = errors.New("unique violation on phone_numbers")

// PhoneNumbers lists a project's numbers.
func (db *DB) PhoneNumbers(ctx context.Context, projectID int64) ([]agentline.PhoneNumber, error) {
	return queryAll(ctx, db.reader(), scanNumber, `SELECT `+numberColumns+` FROM phone_numbers WHERE project_id = ? ORDER BY id`, projectID)
}

// PhoneNumber returns one number of the project.
func (db *DB) PhoneNumber(ctx context.Context, projectID, numberID int64) (agentline.PhoneNumber, error) {
	n, err := scanNumber(db.reader().queryRow(ctx,
		`SELECT `+numberColumns+` FROM phone_numbers WHERE project_id = ? AND id = ?`, projectID, numberID))
	return n, notFound(err, "phone number")
}

// AgentPhoneNumber returns the number linked to an agent of the project.
func (db *DB) AgentPhoneNumber(ctx context.Context, projectID, agentID int64) (agentline.PhoneNumber, error) {
	n, err := scanNumber(db.reader().queryRow(ctx,
		`SELECT `+numberColumns+` FROM phone_numbers WHERE project_id = ? AND agent_id = ?`, projectID, agentID))
	return n, notFound(err, "phone number")
}

// PhoneNumberByE164 finds a number by its digits, whatever project owns it.
// It serves the carrier's webhooks, which name a number, not a project; the
// record says which project it belongs to.
func (db *DB) PhoneNumberByE164(ctx context.Context, phoneNumber string) (agentline.PhoneNumber, error) {
	n, err := scanNumber(db.reader().queryRow(ctx,
		`SELECT `+numberColumns+` FROM phone_numbers WHERE phone_number = ?`, phoneNumber))
	return n, notFound(err, "phone number")
}

// UpdatePhoneNumber saves a number's agent link and status, scoped to
// n.ProjectID. Linking an agent that already has a number is a conflict.
func (db *DB) UpdatePhoneNumber(ctx context.Context, n agentline.PhoneNumber) (agentline.PhoneNumber, error) {
	read := func(c conn) (agentline.PhoneNumber, error) {
		n, err := scanNumber(c.queryRow(ctx, `SELECT `+numberColumns+` FROM phone_numbers WHERE project_id = ? AND id = ?`, n.ProjectID, n.ID))
		return n, notFound(err, "phone number")
	}
	err := db.tx(ctx, func(c conn) error {
		if err := checkNumberAgent(ctx, c, n); err != nil {
			return err
		}
		_, err := updateAudited(ctx, c, n.ProjectID, "number.update", "number", n.ID, read, func(c conn) error {
			_, err := c.exec(ctx, `UPDATE phone_numbers SET agent_id = ?, status = ?, updated_at = ? WHERE project_id = ? AND id = ?`,
				n.AgentID, n.Status, db.now(), n.ProjectID, n.ID)
			if isUniqueViolation(err) {
				return errUniqueNumber
			}
			return err
		})
		return err
	})
	if errors.Is(err, errUniqueNumber) {
		return n, numberConflict(ctx, db.reader(), n)
	}
	if err != nil {
		return n, err
	}
	return db.PhoneNumber(ctx, n.ProjectID, n.ID)
}

// DeletePhoneNumber deletes a number's record; its calls keep their history.
func (db *DB) DeletePhoneNumber(ctx context.Context, projectID, numberID int64) error {
	return db.tx(ctx, func(c conn) error {
		n, err := scanNumber(c.queryRow(ctx, `SELECT `+numberColumns+` FROM phone_numbers WHERE project_id = ? AND id = ?`, projectID, numberID))
		if err != nil {
			return notFound(err, "phone number")
		}
		res, err := c.exec(ctx, `DELETE FROM phone_numbers WHERE project_id = ? AND id = ?`, projectID, numberID)
		if err := mustAffect(res, err, "phone number"); err != nil {
			return err
		}
		if err := c.audit(ctx, change(projectID, "number.delete", "number", numberID, map[string][2]any{"phone_number": {n.PhoneNumber, nil}})); err != nil {
			return err
		}
		return db.emitNumber(ctx, c, agentline.EventNumberReleased, n)
	})
}
