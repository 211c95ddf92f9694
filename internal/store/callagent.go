package store

import (
	"context"
	"strings"

	"github.com/agentline/agentline"
)

// callAgentBySID reads a call and its agent in one statement.
var callAgentBySID = `SELECT ` + qualify("c", callColumns) + `, ` + qualify("a", agentColumns) + `
	FROM calls c JOIN agents a ON a.id = c.agent_id AND a.project_id = c.project_id WHERE c.call_sid = ?`

// CallAgentBySID returns the call with callSID and its agent as the call
// runs it: at the version the call records (a test call's choice, or the
// one it was admitted with), otherwise the published one. A media stream's
// admission needs both, and one read instead of two is one round trip
// less on every call; the agent's settings of another version than its
// latest are read apart, as for PublishedAgent.
func (db *DB) CallAgentBySID(ctx context.Context, callSID string) (agentline.Call, agentline.Agent, error) {
	var cr callRow
	var ar agentRow
	if err := db.reader().queryRow(ctx, callAgentBySID, callSID).Scan(append(cr.dests(), ar.dests()...)...); err != nil {
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
	a, err = db.atVersion(ctx, a, n)
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
