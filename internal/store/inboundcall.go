package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentline/agentline"
)

// insertNewInboundCall inserts a call new to us with its number's project,
// agent and id, in one statement that reads the number; nothing when the
// call is known already (the carrier retried its webhook) or the number
// takes no calls (unknown, or without an agent).
const insertNewInboundCall = `INSERT INTO calls (project_id, agent_id, number_id, call_sid, direction, from_number, to_number, status, stream_ref,
	started_at, ended_at, duration_s, end_reason, created_at, updated_at, agent_version, answered_by)
	SELECT n.project_id, n.agent_id, n.id, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?
	FROM phone_numbers n WHERE n.phone_number = ? AND n.agent_id IS NOT NULL
	ON CONFLICT (call_sid) DO NOTHING RETURNING id, project_id, agent_id, number_id`

// RecordInboundCall is ApplyCallEvent for the carrier's voice webhook of a
// call coming in to one of our numbers (e.Direction inbound, e.To the
// number). A call new to us, the usual case, is inserted as the report
// leaves it in one statement, which reads the number too, instead of a
// look for the call, a read of the number and the insert; a call we know
// already, or a number that takes no calls, goes ApplyCallEvent's way.
func (db *DB) RecordInboundCall(ctx context.Context, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error) {
	e = db.normalized(e)
	now := db.now()
	call := agentline.Call{CallSID: e.CallSID, Direction: agentline.CallInbound, From: e.From, To: e.To, Status: agentline.CallQueued,
		CreatedAt: now}
	db.applyReport(&call, e)
	var out agentline.Call
	err := db.tx(ctx, func(c conn) error {
		var numberID int64
		err := c.queryRow(ctx, insertNewInboundCall, call.CallSID, call.Direction, call.From, call.To, call.Status,
			call.StartedAt, call.EndedAt, call.DurationS, call.EndReason, call.CreatedAt, call.UpdatedAt, nullVersion(call.AgentVersion),
			call.AnsweredBy, e.To).Scan(&call.ID, &call.ProjectID, &call.AgentID, &numberID)
		if errors.Is(err, sql.ErrNoRows) {
			out, err = db.applyCallEvent(ctx, c, e, changed)
			return err
		}
		if err != nil {
			return err
		}
		call.NumberID = &numberID
		out = call
		return db.reported(ctx, c, e, changed, "", call)
	})
	return out, err
}
