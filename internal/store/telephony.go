package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

const callColumns = `id, project_id, agent_id, number_id, call_sid, direction, from_number, to_number, status, stream_ref,
	started_at, ended_at, duration_s, end_reason, answered_by, campaign_id, contact_id, variables, agent_version, created_at, updated_at`

// callRow is a call's columns as scanned, before the nullable ones and
// the variables are converted: apart from scanCall so that one row can
// carry a call and another record (CallAgentBySID).
type callRow struct {
	c                                             agentline.Call
	numberID, campaignID, contactID, version, dur sql.NullInt64
	started, ended                                sql.NullTime
	vars                                          string
}

func (r *callRow) dests() []any {
	c := &r.c
	return []any{&c.ID, &c.ProjectID, &c.AgentID, &r.numberID, &c.CallSID, &c.Direction, &c.From, &c.To, &c.Status, &c.StreamRef,
		&r.started, &r.ended, &r.dur, &c.EndReason, &c.AnsweredBy, &r.campaignID, &r.contactID, &r.vars, &r.version, utc(&c.CreatedAt), utc(&c.UpdatedAt)}
}

func (r *callRow) call() (agentline.Call, error) {
	c := r.c
	c.AgentVersion = int(r.version.Int64)
	c.NumberID, c.CampaignID, c.ContactID = nullInt64(r.numberID), nullInt64(r.campaignID), nullInt64(r.contactID)
	c.StartedAt, c.EndedAt = nullTime(r.started), nullTime(r.ended)
	if r.dur.Valid {
		d := int(r.dur.Int64)
		c.DurationS = &d
	}
	var err error
	c.Variables, err = callVariables(c.ID, r.vars)
	return c, err
}

func scanCall(row interface{ Scan(...any) error }) (agentline.Call, error) {
	var r callRow
	if err := row.Scan(r.dests()...); err != nil {
		return r.c, err
	}
	return r.call()
}

// callIsLive is the condition of a call our records show live, written
// out as the partial indexes calls_live and calls_live_project have it:
// the planners use a partial index only for a query whose condition they
// can match with the index's, and a status list of bound parameters
// never matches, so a query with one read every call the project ever
// made (every call of the deployment, for reconciliation), on every
// reservation of a call. Comparisons, not an IN list: SQLite builds a
// temporary table for an IN list of more than two constants, each time it
// evaluates one, and it evaluates the indexes' condition on every write
// of a call (migration 00036).
const callIsLive = `(status = '` + agentline.CallQueued + `' OR status = '` + agentline.CallInitiated + `' OR status = '` +
	agentline.CallRinging + `' OR status = '` + agentline.CallInProgress + `')`

// LiveCallWindow bounds how long a call without a final status counts as
// live for the concurrency cap: the carrier ends every call within four
// hours, so a record whose last status callback was lost stops blocking.
const LiveCallWindow = 4 * time.Hour

// ReserveCall stores an outbound call before the carrier is asked to place
// it, unless the project already has max live calls (rate_limited). The
// count and the insert are one transaction, so concurrent requests cannot
// pass the cap together. c.CallSID is a placeholder until AttachCallSID.
func (db *DB) ReserveCall(ctx context.Context, c agentline.Call, max int) (agentline.Call, error) {
	return db.reserveCall(ctx, c, max, nil)
}

// reserveCall is ReserveCall; then, when not nil, runs in the same
// transaction with the inserted call.
func (db *DB) reserveCall(ctx context.Context, c agentline.Call, max int, then func(tx conn, c agentline.Call) error) (agentline.Call, error) {
	c.CreatedAt, c.UpdatedAt = db.now(), db.now()
	err := db.tx(ctx, func(tx conn) error {
		if db.dialect == Postgres {
			// Serializes reservations of one project; SQLite's single
			// write connection already does.
			if _, err := tx.exec(ctx, `SELECT id FROM projects WHERE id = ? FOR UPDATE`, c.ProjectID); err != nil {
				return err
			}
		}
		var live int
		err := tx.queryRow(ctx, `SELECT count(*) FROM calls WHERE project_id = ? AND `+callIsLive+` AND created_at > ?`,
			c.ProjectID, c.CreatedAt.Add(-LiveCallWindow)).Scan(&live)
		if err != nil {
			return err
		}
		if live >= max {
			return &agentline.Error{Code: agentline.ERateLimited, RetryAfter: 30,
				Message: fmt.Sprintf("this project already has %d calls in progress, the most allowed (AGENTLINE_MAX_CONCURRENT_CALLS); try again when one ends", live)}
		}
		if err := insertCall(ctx, tx, &c); err != nil {
			return err
		}
		if err := tx.auditRequest(ctx, change(c.ProjectID, "call.place", "call", c.ID,
			map[string][2]any{"to": {nil, c.To}, "agent_id": {nil, c.AgentID}})); err != nil || then == nil {
			return err
		}
		return then(tx, c)
	})
	return c, err
}

func insertCall(ctx context.Context, c conn, call *agentline.Call) error {
	err := c.queryRow(ctx,
		`INSERT INTO calls (project_id, agent_id, number_id, call_sid, direction, from_number, to_number, status, stream_ref,
		   started_at, ended_at, duration_s, end_reason, created_at, updated_at, agent_version, answered_by)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		call.ProjectID, call.AgentID, call.NumberID, call.CallSID, call.Direction, call.From, call.To, call.Status, call.StreamRef,
		call.StartedAt, call.EndedAt, call.DurationS, call.EndReason, call.CreatedAt, call.UpdatedAt, nullVersion(call.AgentVersion),
		call.AnsweredBy).Scan(&call.ID)
	if isUniqueViolation(err) {
		return agentline.Errorf(agentline.EConflict, "call %s is already recorded", call.CallSID)
	}
	if isForeignKeyViolation(err) {
		return agentline.NotFound("project")
	}
	return err
}

// DeleteCall removes a reserved call the carrier refused to place: the
// refusal answers a campaign call's request, for its campaign's pace.
func (db *DB) DeleteCall(ctx context.Context, projectID, callID int64) error {
	return db.tx(ctx, func(c conn) error {
		if err := db.answeredRequest(ctx, c, callID); err != nil {
			return err
		}
		res, err := c.exec(ctx, `DELETE FROM calls WHERE project_id = ? AND id = ?`, projectID, callID)
		return mustAffect(res, err, "call")
	})
}

// Call returns one call of the project by its carrier SID.
func (db *DB) Call(ctx context.Context, projectID int64, callSID string) (agentline.Call, error) {
	c, err := scanCall(db.reader().queryRow(ctx,
		`SELECT `+callColumns+` FROM calls WHERE project_id = ? AND call_sid = ?`, projectID, callSID))
	return c, notFound(err, "call")
}

// CallBySID returns a call by its carrier SID, whatever its project (a
// call SID is unique): a media stream's admission reads the call it names
// without first reading its agent's project, then holds it to the agent.
func (db *DB) CallBySID(ctx context.Context, callSID string) (agentline.Call, error) {
	c, err := scanCall(db.reader().queryRow(ctx,
		`SELECT `+callColumns+` FROM calls WHERE call_sid = ?`, callSID))
	return c, notFound(err, "call")
}

// CallByStreamRef returns the outbound call of the project whose media
// stream carries ref (the stream_ref parameter of its TwiML), so the relay
// can match a stream's start message to the record.
func (db *DB) CallByStreamRef(ctx context.Context, projectID int64, ref string) (agentline.Call, error) {
	if ref == "" {
		return agentline.Call{}, agentline.NotFound("call")
	}
	c, err := scanCall(db.reader().queryRow(ctx,
		`SELECT `+callColumns+` FROM calls WHERE project_id = ? AND stream_ref = ?`, projectID, ref))
	return c, notFound(err, "call")
}

// ProjectOfCall returns the id of the project that owns the call, so that
// handlers addressed by a call SID can authorize before loading it.
func (db *DB) ProjectOfCall(ctx context.Context, callSID string) (int64, error) {
	var projectID int64
	err := db.reader().queryRow(ctx, `SELECT project_id FROM calls WHERE call_sid = ?`, callSID).Scan(&projectID)
	return projectID, notFound(err, "call")
}

// Calls lists a project's calls, newest first.
func (db *DB) Calls(ctx context.Context, projectID int64, f agentline.CallFilter) ([]agentline.Call, error) {
	q := `SELECT ` + callColumns + ` FROM calls WHERE project_id = ?`
	args := []any{projectID}
	if f.AgentID > 0 {
		q += ` AND agent_id = ?`
		args = append(args, f.AgentID)
	}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if f.Before > 0 {
		q += ` AND id < ?`
		args = append(args, f.Before)
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, f.Limit)
	return queryAll(ctx, db.reader(), scanCall, q, args...)
}

// ApplyCallEvent records a status report. Statuses only move forward
// (queued, ringing, in-progress, then one final status), so reports that
// arrive out of order never revive an ended call. A report about an
// unknown call to one of our numbers (an inbound call) creates its record
// in the number's project; any other unknown call is not found. changed
// follows every report that is written, in its transaction
// (agentline.CallFollowUp).
func (db *DB) ApplyCallEvent(ctx context.Context, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error) {
	var out agentline.Call
	err := db.tx(ctx, func(c conn) (err error) {
		out, err = db.applyCallEvent(ctx, c, e, changed)
		return err
	})
	return out, err
}

// ApplyCarrierStatus is ApplyCallEvent for the carrier's status callback
// when the call's relay has ended: a final status (with no log or end
// reason of its own) then often comes after the relay has recorded the
// call's end, changes nothing, and one read answers it instead of a write
// transaction. Callers whose relay still runs, which will not find the
// end recorded, take ApplyCallEvent.
//
// On SQLite that read runs on the connection that writes, whose page
// cache holds the call's pages from the end just written, where a
// reader's has been emptied by the writes since its last read (a read
// waits for a write in progress, as the write transaction it spares
// would).
func (db *DB) ApplyCarrierStatus(ctx context.Context, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error) {
	if agentline.CallStatusFinal(e.Status) && len(e.Log) == 0 && e.EndReason == "" {
		call, err := scanCall(db.writer().queryRow(ctx, `SELECT `+callColumns+` FROM calls WHERE call_sid = ?`, e.CallSID))
		if err == nil && unchangedBy(call, e) {
			return call, nil
		}
	}
	return db.ApplyCallEvent(ctx, e, changed)
}

// applyCallEvent is ApplyCallEvent inside the transaction c.
func (db *DB) applyCallEvent(ctx context.Context, c conn, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error) {
	e = db.normalized(e)
	lock := ""
	if db.dialect == Postgres {
		// Reports of one call (a status callback, the relay's end, a
		// reconciliation) take turns, so only one of them ends it.
		lock = " FOR UPDATE"
	}
	call, err := scanCall(c.queryRow(ctx, `SELECT `+callColumns+` FROM calls WHERE call_sid = ?`+lock, e.CallSID))
	if err == nil {
		return db.updateCall(ctx, c, call, e, changed)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return call, err
	}
	// A call new to us is inserted as the report leaves it: one write.
	if call, err = newInboundCall(ctx, c, e, db.now()); err != nil {
		return call, err
	}
	db.applyReport(&call, e)
	if err := insertCall(ctx, c, &call); err != nil {
		return call, err
	}
	return call, db.reported(ctx, c, e, changed, "", call)
}

// updateCallReport writes what a report changes in a call's record.
const updateCallReport = `UPDATE calls SET status = ?, started_at = ?, ended_at = ?, duration_s = ?, end_reason = ?, updated_at = ?,
	agent_version = ?, answered_by = ? WHERE id = ?`

// updateCall applies the report e (normalized) to call, read in c's
// transaction (for update, on PostgreSQL), and writes it.
func (db *DB) updateCall(ctx context.Context, c conn, call agentline.Call, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error) {
	previous := call.Status
	db.applyReport(&call, e)
	_, err := c.exec(ctx, updateCallReport, call.Status, call.StartedAt, call.EndedAt, call.DurationS, call.EndReason, call.UpdatedAt,
		nullVersion(call.AgentVersion), call.AnsweredBy, call.ID)
	if err != nil {
		return call, err
	}
	return call, db.reported(ctx, c, e, changed, previous, call)
}

// normalized is e with its time set (now when the report gives none), in
// UTC.
func (db *DB) normalized(e agentline.CallEvent) agentline.CallEvent {
	if e.At.IsZero() {
		e.At = db.now()
	}
	e.At = e.At.UTC()
	return e
}

// applyReport changes the record call as the report e leaves it.
func (db *DB) applyReport(call *agentline.Call, e agentline.CallEvent) {
	if agentline.CallStatusAdvances(call.Status, e.Status) {
		call.Status = e.Status
		if e.Status == agentline.CallInProgress && call.StartedAt == nil {
			call.StartedAt = &e.At
		}
		if agentline.CallStatusFinal(e.Status) {
			call.EndedAt = &e.At
			call.DurationS = e.DurationS
		}
	} else if agentline.CallStatusFinal(call.Status) && call.DurationS == nil && e.DurationS != nil {
		call.DurationS = e.DurationS // a late duration for an ended call
	}
	if call.EndReason == "" || call.EndReason == agentline.EndReasonReconciled && e.EndReason != "" {
		call.EndReason = e.EndReason // what the relay knows beats what reconciliation guessed
	}
	call.UpdatedAt = db.now()
	if e.AgentVersion != 0 {
		call.AgentVersion = e.AgentVersion
	}
	if call.AnsweredBy == "" {
		call.AnsweredBy = e.AnsweredBy
	}
}

// reported is what follows a report once the call's record is written:
// its log, the audit of a status change, and changed.
func (db *DB) reported(ctx context.Context, c conn, e agentline.CallEvent, changed agentline.CallFollowUp, previous string, call agentline.Call) error {
	if err := insertCallLog(ctx, c, call.ID, e.Log); err != nil {
		return err
	}
	if previous != call.Status {
		if err := c.auditRequest(ctx, change(call.ProjectID, "call.end", "call", call.ID,
			map[string][2]any{"status": {previous, call.Status}})); err != nil {
			return err
		}
	}
	return db.followCall(ctx, c, changed, previous, call)
}

// newInboundCall is the record of a call the carrier reports to one of
// our numbers that has an agent, queued and not yet inserted: the caller
// inserts it once the report has been applied.
func newInboundCall(ctx context.Context, c conn, e agentline.CallEvent, now time.Time) (agentline.Call, error) {
	if e.Direction != agentline.CallInbound || e.To == "" {
		return agentline.Call{}, agentline.NotFound("call")
	}
	n, err := scanNumber(c.queryRow(ctx, `SELECT `+numberColumns+` FROM phone_numbers WHERE phone_number = ?`, e.To))
	if err != nil {
		return agentline.Call{}, notFound(err, "call")
	}
	if n.AgentID == nil {
		return agentline.Call{}, agentline.NotFound("call")
	}
	return agentline.Call{
		ProjectID: n.ProjectID, AgentID: *n.AgentID, NumberID: &n.ID, CallSID: e.CallSID,
		Direction: agentline.CallInbound, From: e.From, To: e.To, Status: agentline.CallQueued,
		CreatedAt: now, UpdatedAt: now,
	}, nil
}
