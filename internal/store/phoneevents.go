package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agentline/agentline"
)

// callStatusData is the data of call.status_changed (docs/openapi.yaml).
type callStatusData struct {
	Call struct {
		CallSID        string `json:"call_sid"`
		AgentID        int64  `json:"agent_id"`
		Direction      string `json:"direction"`
		From           string `json:"from"`
		To             string `json:"to"`
		Status         string `json:"status"`
		PreviousStatus string `json:"previous_status"`
	} `json:"call"`
}

// numberData is the data of number.provisioned and number.released.
type numberData struct {
	Number struct {
		ID          int64  `json:"id"`
		PhoneNumber string `json:"phone_number"`
		AgentID     *int64 `json:"agent_id"`
	} `json:"number"`
}

// emitCallChange emits, in the transaction that changed the call, what a
// status change means to the project's endpoints: call.status_changed, and
// conversation.started or .ended when the call went in progress or ended.
// All three share the conversation's subject, so one endpoint gets them in
// order. The endpoints are looked up once; a project without any pays that
// one query.
func (db *DB) emitCallChange(ctx context.Context, c conn, previous string, call agentline.Call) error {
	if previous == call.Status {
		return nil
	}
	out := db.outboxOn(c)
	eps, err := out.endpoints(ctx, call.ProjectID)
	if err != nil || len(eps) == 0 {
		return err
	}
	subject := agentline.CallConversationID(call.ID)
	if ids := wanting(eps, agentline.EventCallStatusChanged); len(ids) > 0 {
		var d callStatusData
		d.Call.CallSID, d.Call.AgentID, d.Call.Direction = call.CallSID, call.AgentID, call.Direction
		d.Call.From, d.Call.To, d.Call.Status, d.Call.PreviousStatus = call.From, call.To, call.Status, previous
		e, err := agentline.NewEvent(call.ProjectID, agentline.EventCallStatusChanged, subject, d)
		if err != nil {
			return err
		}
		if _, err := out.emitTo(ctx, e, ids...); err != nil {
			return err
		}
	}
	typ := ""
	switch {
	case agentline.CallStatusFinal(call.Status) && !agentline.CallStatusFinal(previous):
		typ = agentline.EventConversationEnded
	case call.Status == agentline.CallInProgress:
		typ = agentline.EventConversationStarted
	}
	ids := wanting(eps, typ)
	if typ == "" || len(ids) == 0 {
		return nil
	}
	conv, err := conversationIn(ctx, c, call.ProjectID, subject)
	if err != nil {
		return fmt.Errorf("emit %s: %w", typ, err)
	}
	e, err := agentline.NewConversationEvent(typ, conv)
	if err != nil {
		return err
	}
	_, err = out.emitTo(ctx, e, ids...)
	return err
}

// emitNumber emits number.provisioned or number.released for n in the
// transaction that stored or removed it.
func (db *DB) emitNumber(ctx context.Context, c conn, typ string, n agentline.PhoneNumber) error {
	var d numberData
	d.Number.ID, d.Number.PhoneNumber, d.Number.AgentID = n.ID, n.PhoneNumber, n.AgentID
	e, err := agentline.NewEvent(n.ProjectID, typ, "number:"+strconv.FormatInt(n.ID, 10), d)
	if err != nil {
		return err
	}
	return db.outboxOn(c).Emit(ctx, e)
}
