package conversation

// A conversation's life, on every channel, is decided here: what follows
// its start and its end. The store decides only that a write started or
// ended one (a session left live, a call became final) and runs these
// follow-ups in the same transaction (agentline.ConversationFollowUp,
// agentline.CallFollowUp), so the events and the analysis are kept with
// the change or not at all. The channels pass them to the store:
//
//   - widget sessions and live chats: Started when the provider session
//     opens (store.CreateWidgetSession, StartWidgetSession), Ended at the
//     client's session_ended (AddSessionEvents) and at the sweeper's
//     abandon (AbandonIdleSessions, sweeper.go);
//   - phone and test calls: CallChanged after every report that does not
//     bring the call's log (the carrier's status callbacks, an admitted
//     stream, a hang-up through the API, reconciliation), RelayEnded
//     after the relay's end record, which does (store.ApplyCallEvent,
//     AdmitStream). A call's analysis waits for its whole log (callAnalysis).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// Started is what follows the start of the conversation id:
// conversation.started. Nothing else may follow a start: the store writes
// the widget sessions of projects without webhook endpoints in one group
// insert, without running Started (store/sessionbatch.go).
func Started(ctx context.Context, tx agentline.ConversationTx, projectID int64, id string) error {
	return emit(ctx, tx, projectID, id, agentline.EventConversationStarted)
}

// Ended is what follows the end of the conversation id, however it ended:
// its analysis when the agent asks for one, then conversation.ended. A
// phone call's end follows from CallChanged or RelayEnded, which decide
// when its analysis can run.
func Ended(ctx context.Context, tx agentline.ConversationTx, projectID int64, id string) error {
	return ended(ctx, tx, projectID, id, analyseNow)
}

func ended(ctx context.Context, tx agentline.ConversationTx, projectID int64, id string, how analysisStart) error {
	if err := startAnalysis(ctx, tx, projectID, id, how); err != nil {
		return err
	}
	return emit(ctx, tx, projectID, id, agentline.EventConversationEnded)
}

// CallChanged is what follows a report about a call that does not bring
// its log (the carrier's status callbacks, an admitted stream, a hang-up
// through the API, reconciliation) when it changed the call's status:
// call.status_changed, then, when the call went in progress, its
// conversation's start, and when it became final, its end, and the
// settlement of the campaign dial that placed it, if one did. The events
// share the conversation's subject, so one endpoint receives them in order.
func CallChanged(ctx context.Context, tx agentline.ConversationTx, previous string, call agentline.Call) error {
	return callChanged(ctx, tx, previous, call, callLog{})
}

// RelayEnded is what follows the relay's end record of a call, which
// brings the rest of the call's log; spoke says whether the caller said
// anything in the whole call. A call the record ends follows as in
// CallChanged, its analysis decided at once: skipped when the caller never
// spoke, else its job. A call the carrier ended first has its analysis
// waiting for this log: the wait ends the same way.
func RelayEnded(spoke bool) agentline.CallFollowUp {
	return func(ctx context.Context, tx agentline.ConversationTx, previous string, call agentline.Call) error {
		if previous != call.Status {
			return callChanged(ctx, tx, previous, call, callLog{complete: true, spoke: spoke})
		}
		if !agentline.CallStatusFinal(call.Status) {
			return nil // transferred: the call goes on, and the carrier ends it
		}
		id := agentline.CallConversationID(call.ID)
		waited, err := tx.EndLogWait(ctx, call.ProjectID, id, !spoke)
		if err != nil || !waited || !spoke {
			return err
		}
		return tx.Enqueue(ctx, agentline.AnalyzeConversation{ProjectID: call.ProjectID, ConversationID: id})
	}
}

// callLog is what a report about a call knows of the call's log.
type callLog struct {
	complete bool // the report brings the rest of it (the relay's end)
	spoke    bool // and the caller said something in the call
}

func callChanged(ctx context.Context, tx agentline.ConversationTx, previous string, call agentline.Call, log callLog) error {
	if previous == call.Status {
		return nil
	}
	id := agentline.CallConversationID(call.ID)
	var d callStatusData
	d.Call.CallSID, d.Call.AgentID, d.Call.Direction = call.CallSID, call.AgentID, call.Direction
	d.Call.From, d.Call.To, d.Call.Status, d.Call.PreviousStatus = call.From, call.To, call.Status, previous
	d.Call.CampaignID, d.Call.ContactID, d.Call.Variables = call.CampaignID, call.ContactID, call.Variables
	e, err := agentline.NewEvent(call.ProjectID, agentline.EventCallStatusChanged, id, d)
	if err != nil {
		return err
	}
	if err := tx.Emit(ctx, e); err != nil {
		return err
	}
	switch {
	case agentline.CallStatusFinal(call.Status) && !agentline.CallStatusFinal(previous):
		if err := ended(ctx, tx, call.ProjectID, id, callAnalysis(call, log)); err != nil {
			return err
		}
		return settleCampaignCall(ctx, tx, call)
	case call.Status == agentline.CallInProgress:
		return Started(ctx, tx, call.ProjectID, id)
	}
	return nil
}

// callAnalysis is how an ended call's analysis starts. A call nobody
// answered (busy, no answer, failed, canceled) has nothing to analyse; one
// whose log the report completes is analysed at once unless the caller
// never spoke. So is a transferred call: its relay ended at the transfer,
// before the carrier ended the call, so its log is whole already, and a
// transfer follows a conversation. Any other waits for its relay's end, at
// most CallLogWait (store.QueueAnalysesAwaitingLog): the carrier's final
// status often comes before the relay has written the call's last lines.
func callAnalysis(call agentline.Call, log callLog) analysisStart {
	switch {
	case call.Status != agentline.CallCompleted, log.complete && !log.spoke:
		return analysisSkipped
	case log.complete, call.EndReason == agentline.EndReasonTransferred:
		return analyseNow
	}
	return analysisAwaitsLog
}

// settleCampaignCall records what an ended outbound call placed by a
// campaign came to, in the transaction that ended it, so that its contact
// is retried or finished exactly when the call's end is kept. A call no
// campaign placed, or whose dial was settled already, is left alone.
func settleCampaignCall(ctx context.Context, tx agentline.ConversationTx, call agentline.Call) error {
	if call.Direction != agentline.CallOutbound {
		return nil
	}
	cc, err := tx.CampaignCall(ctx, call.ProjectID, call.ID)
	if errors.Is(err, agentline.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("campaign call %d: %w", call.ID, err)
	}
	s, ok := cc.Settle(agentline.CallOutcome(call), time.Now())
	if !ok {
		return nil
	}
	return tx.SettleCampaignDial(ctx, s)
}

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
		// A campaign call's links and variables, as on its conversation.
		CampaignID *int64            `json:"campaign_id,omitempty"`
		ContactID  *int64            `json:"contact_id,omitempty"`
		Variables  map[string]string `json:"variables,omitempty"`
	} `json:"call"`
}

// emit emits typ with the conversation as the transaction sees it; the
// conversation is read only when an endpoint wants the event.
func emit(ctx context.Context, tx agentline.ConversationTx, projectID int64, id, typ string) error {
	if ok, err := tx.Wants(ctx, projectID, typ); err != nil || !ok {
		return err
	}
	conv, err := tx.Conversation(ctx, projectID, id)
	if err != nil {
		return fmt.Errorf("emit %s: %w", typ, err)
	}
	e, err := agentline.NewConversationEvent(typ, conv)
	if err != nil {
		return err
	}
	return tx.Emit(ctx, e)
}

// analysisStart is how a conversation's analysis starts.
type analysisStart int

const (
	analyseNow        analysisStart = iota // pending, with its job
	analysisSkipped                        // skipped: nothing to analyse
	analysisAwaitsLog                      // pending, its job once the call's log is in
)

// startAnalysis writes the analysis of the conversation id as how says,
// when the agent asks for any analysis. A conversation already analysed
// (or pending), or whose agent is gone, is left alone.
func startAnalysis(ctx context.Context, tx agentline.ConversationTx, projectID int64, id string, how analysisStart) error {
	agentID, stored, err := tx.AgentAnalysis(ctx, projectID, id)
	if errors.Is(err, agentline.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	settings, err := agentline.ParseAnalysisSettings(stored)
	if err != nil {
		return fmt.Errorf("agent %d analysis: %w", agentID, err)
	}
	if !settings.Enabled() {
		return nil
	}
	if how == analysisSkipped {
		return tx.AddSkippedAnalysis(ctx, projectID, agentID, id)
	}
	added, err := tx.AddPendingAnalysis(ctx, projectID, agentID, id, how == analysisAwaitsLog)
	if err != nil || !added || how == analysisAwaitsLog {
		return err
	}
	return tx.Enqueue(ctx, agentline.AnalyzeConversation{ProjectID: projectID, ConversationID: id})
}
