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

// RecordInboundCall answers the carrier's voice webhook of a call coming
// in to one of our numbers (e.Direction inbound, e.To the number). In one
// write transaction it reads the published agent that answers e.To, asks
// take whether that agent takes the call (nil: any does), and records the
// call as ApplyCallEvent would. The read runs on the connection that
// writes: on SQLite its page cache is still warm with the pages that the
// calls' own writes touched, where a reader's is emptied by every write
// since its last read, and the agent and the call are read and written
// in one visit.
//
// A call new to us, the usual case, is inserted as the report leaves it
// in one statement, which reads the number too; a call we know already
// (the carrier retried its webhook) goes ApplyCallEvent's way. Not found
// when e.To is not an active number with an agent (PhoneNumberByE164 and
// PublishedAgent tell why); take's error as it is. Either way nothing is
// recorded.
func (db *DB) RecordInboundCall(ctx context.Context, e agentline.CallEvent, take func(agentline.Agent) error,
	changed agentline.CallFollowUp) (agentline.Call, agentline.Agent, error) {
	e = db.normalized(e)
	now := db.now()
	call := agentline.Call{CallSID: e.CallSID, Direction: agentline.CallInbound, From: e.From, To: e.To, Status: agentline.CallQueued,
		CreatedAt: now}
	db.applyReport(&call, e)
	var out agentline.Call
	var agent agentline.Agent
	err := db.tx(ctx, func(c conn) (err error) {
		if agent, err = numberAgentOn(ctx, c, e.To); err != nil {
			return err
		}
		if take != nil {
			if err := take(agent); err != nil {
				return err
			}
		}
		var numberID int64
		err = c.queryRow(ctx, insertNewInboundCall, call.CallSID, call.Direction, call.From, call.To, call.Status,
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
	if err != nil {
		return agentline.Call{}, agentline.Agent{}, err
	}
	return out, agent, nil
}

// numberAgentOn reads, on c, the published agent that answers calls to
// the active number phoneNumber: one read of the number and the agent
// when the published version is the latest. Not found when the number is
// unknown, not active or has no agent.
func numberAgentOn(ctx context.Context, c conn, phoneNumber string) (agentline.Agent, error) {
	a, err := scanAgent(c.queryRow(ctx, `SELECT `+agentColumns+` FROM agents
		WHERE id = (SELECT agent_id FROM phone_numbers WHERE phone_number = ? AND status = ?)
		AND project_id = (SELECT project_id FROM phone_numbers WHERE phone_number = ?)`,
		phoneNumber, agentline.NumberActive, phoneNumber))
	if err != nil {
		return a, notFound(err, "agent")
	}
	return atVersionOn(ctx, c, a, a.PublishedVersion)
}
