package livecall

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentline/agentline"
)

// optOutTool is offered on campaign calls (calls to a contact): the person
// asks not to be called again, and the agent records it while they listen.
var optOutTool = agentline.ToolDefinition{
	Name: "opt_out",
	Description: "Record that the person does not want to be called again. Call it as soon as they ask not to be called " +
		"(or to be taken off the list). Then tell them they will not be called again and say goodbye: the call ends once your words have played.",
	Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
}

// optOutReason is the reason the do-not-call list shows for a number that
// opted out on a call.
const optOutReason = "opted out on a call"

// reasonOptedOut is the end reason of a call on which the person opted out.
const reasonOptedOut = "opted_out"

// optOut runs opt_out: the contact's number goes on the project's
// do-not-call list and the contact becomes opted_out (one write), then the
// call ends after the agent's answer, which says goodbye. The write does
// not end with the call: a person who hangs up right after asking is
// opted out all the same. When it fails, the agent is told so (and the
// call goes on), so it does not promise what was not recorded.
func (t callTools) optOut(ctx context.Context, call agentline.ToolCall) agentline.ToolResult {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := t.h.store.OptOutContact(wctx, t.call.ProjectID, *t.call.ContactID, optOutReason); err != nil {
		t.log.Error("could not record an opt-out", "contact_id", *t.call.ContactID, "err", err)
		return agentline.ToolResult{CallID: call.CallID, IsError: true,
			Output: `{"error":{"code":"internal","message":"the opt-out could not be recorded; apologise and tell the person to ask again later"}}`}
	}
	t.optedOut.Store(true)
	t.log.Info("the person opted out; the call ends after the agent's goodbye", "contact_id", *t.call.ContactID)
	t.relay.EndAfterReply()
	return agentline.ToolResult{CallID: call.CallID,
		Output: `{"ok":true,"note":"the number is on the do-not-call list; tell the person they will not be called again and say goodbye; the call ends after your words"}`}
}
