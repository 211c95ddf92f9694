package store_test

import (
	"context"

	"github.com/agentline/agentline"
)

// The store decides only that a write started or ended a conversation, and
// runs in that transaction what it is given to follow (package
// conversation decides what that is, and its tests check it). These
// stand-ins emit one event named after what happened, with the
// conversation's subject, so that the store's tests see a follow-up run
// once, in the transaction, for the right conversation.

// started stands in for conversation.Started.
func started(ctx context.Context, tx agentline.ConversationTx, projectID int64, id string) error {
	return emitFollowUp(ctx, tx, projectID, id, agentline.EventConversationStarted)
}

// ended stands in for conversation.Ended.
func ended(ctx context.Context, tx agentline.ConversationTx, projectID int64, id string) error {
	return emitFollowUp(ctx, tx, projectID, id, agentline.EventConversationEnded)
}

// callChanged stands in for conversation.CallChanged: one
// call.status_changed per change.
func callChanged(ctx context.Context, tx agentline.ConversationTx, previous string, call agentline.Call) error {
	if previous == call.Status {
		return nil // a report that changed nothing (it follows every report)
	}
	return emitFollowUp(ctx, tx, call.ProjectID, agentline.CallConversationID(call.ID), agentline.EventCallStatusChanged)
}

func emitFollowUp(ctx context.Context, tx agentline.ConversationTx, projectID int64, id, typ string) error {
	e, err := agentline.NewEvent(projectID, typ, id, map[string]string{"conversation_id": id})
	if err != nil {
		return err
	}
	return tx.Emit(ctx, e)
}
