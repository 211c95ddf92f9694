package store

import (
	"context"
	"fmt"

	"github.com/agentline/agentline"
)

// convTx is agentline.ConversationTx on one write transaction: what the
// store hands to the follow-up of a conversation's start or end (package
// conversation decides what that is). It looks each project's endpoints up
// once: a call's change emits up to two events (call.status_changed, then
// conversation.started or .ended), and a project without endpoints pays
// one query for both.
type convTx struct {
	*outbox
	endpoints map[int64][]agentline.WebhookEndpoint
}

func (db *DB) convTxOn(c conn) *convTx { return &convTx{outbox: db.outboxOn(c)} }

// followConversation runs then, when there is one, in the transaction c
// that started or ended the conversation id.
func (db *DB) followConversation(ctx context.Context, c conn, then agentline.ConversationFollowUp, projectID int64, id string) error {
	if then == nil {
		return nil
	}
	return then(ctx, db.convTxOn(c), projectID, id)
}

// followCall runs then, when there is one, in the transaction c that
// applied a report about the call, whose status was previous.
func (db *DB) followCall(ctx context.Context, c conn, then agentline.CallFollowUp, previous string, call agentline.Call) error {
	if then == nil {
		return nil
	}
	return then(ctx, db.convTxOn(c), previous, call)
}

// subscribed lists the project's enabled endpoints that want events of
// type typ.
func (t *convTx) subscribed(ctx context.Context, projectID int64, typ string) ([]int64, error) {
	eps, ok := t.endpoints[projectID]
	if !ok {
		var err error
		if eps, err = t.outbox.endpoints(ctx, projectID); err != nil {
			return nil, fmt.Errorf("emit %s: %w", typ, err)
		}
		if t.endpoints == nil {
			t.endpoints = map[int64][]agentline.WebhookEndpoint{}
		}
		t.endpoints[projectID] = eps
	}
	return wanting(eps, typ), nil
}

// Emit stores e and its deliveries, as the outbox does, with the endpoints
// looked up once.
func (t *convTx) Emit(ctx context.Context, e agentline.Event) error {
	ids, err := t.subscribed(ctx, e.ProjectID, e.Type)
	if err != nil || len(ids) == 0 {
		return err
	}
	_, err = t.emitTo(ctx, e, ids...)
	return err
}

// Wants reports whether an enabled endpoint of the project wants typ.
func (t *convTx) Wants(ctx context.Context, projectID int64, typ string) (bool, error) {
	ids, err := t.subscribed(ctx, projectID, typ)
	return len(ids) > 0, err
}

// Conversation returns the conversation as the transaction sees it.
func (t *convTx) Conversation(ctx context.Context, projectID int64, id string) (agentline.Conversation, error) {
	return conversationIn(ctx, t.c, projectID, id)
}
