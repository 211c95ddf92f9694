package store

import (
	"context"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// callAgentBySID reads a call and its agent in one statement.
var callAgentBySID = `SELECT ` + qualify("c", callColumns) + `, ` + qualify("a", agentColumns) + `
	FROM calls c JOIN agents a ON a.id = c.agent_id AND a.project_id = c.project_id WHERE c.call_sid = ?`

// AdmitCallStream admits the media stream of a call known by its SID (an
// inbound or a test call), all in one write transaction: it reads the
// call and its agent as the call runs it, asks admit whether the stream
// may reach the agent and what the call's record becomes (the call going
// in progress), then records the one use of the stream token with ref
// (AdmitStream) and applies that event. admit's error, or conflict for a
// token used before, leaves everything as it was, the token unused.
//
// The reads run on the connection that writes: on SQLite its page cache
// is still warm with the call's own pages, where a reader's is emptied by
// every write since its last read; and the call is read once, for the
// checks and for its update both (locked for update on PostgreSQL).
func (db *DB) AdmitCallStream(ctx context.Context, callSID, ref string, expires time.Time,
	admit func(agentline.Call, agentline.Agent) (agentline.CallEvent, error), changed agentline.CallFollowUp) (agentline.Call, agentline.Agent, error) {
	var call agentline.Call
	var agent agentline.Agent
	err := db.tx(ctx, func(c conn) (err error) {
		if call, agent, err = db.callAgentOn(ctx, c, callSID); err != nil {
			return err
		}
		e, err := admit(call, agent)
		if err != nil {
			return err
		}
		if err := useStreamToken(ctx, c, ref, expires); err != nil {
			return err
		}
		call, err = db.updateCall(ctx, c, call, db.normalized(e), changed)
		return err
	})
	if err != nil {
		return agentline.Call{}, agentline.Agent{}, err
	}
	return call, agent, nil
}

// callAgentOn reads, on c, the call with callSID and its agent as the call
// runs it: at the version the call records (a test call's choice, or the
// one it was admitted with), otherwise the published one. Both come in one
// read; the settings of another version than the agent's latest are read
// apart, as for PublishedAgent. c is a transaction's: on PostgreSQL the
// call is locked for update, as applyCallEvent locks it.
func (db *DB) callAgentOn(ctx context.Context, c conn, callSID string) (agentline.Call, agentline.Agent, error) {
	q := callAgentBySID
	if db.dialect == Postgres {
		q += " FOR UPDATE OF c"
	}
	var cr callRow
	var ar agentRow
	if err := c.queryRow(ctx, q, callSID).Scan(append(cr.dests(), ar.dests()...)...); err != nil {
		return agentline.Call{}, agentline.Agent{}, notFound(err, "call")
	}
	call, err := cr.call()
	if err != nil {
		return call, agentline.Agent{}, err
	}
	a, err := ar.agent()
	if err != nil {
		return call, a, err
	}
	n := a.PublishedVersion
	if call.AgentVersion != 0 {
		n = call.AgentVersion
	}
	a, err = atVersionOn(ctx, c, a, n)
	return call, a, err
}

// qualify prefixes each column of a list with a table's alias.
func qualify(alias, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
