package agentline

import "context"

// A conversation's life has one owner, package conversation: it decides
// what follows a conversation's start or end (its events, its analysis) on
// every channel. The store decides only whether a write started or ended
// one (a session left live, a call became final), and then runs the
// owner's follow-up in the same transaction, through the types below, so
// that what follows is kept with the change or not at all.

// ConversationTx is the write transaction that started or ended a
// conversation, as the store hands it to what follows: the outbox, and the
// few reads and writes the follow-up needs.
type ConversationTx interface {
	Outbox
	// Wants reports whether an enabled endpoint of the project subscribes
	// to events of type typ, so that an event whose data takes a read is
	// built only when someone will receive it.
	Wants(ctx context.Context, projectID int64, typ string) (bool, error)
	// Conversation returns the conversation as the transaction sees it.
	Conversation(ctx context.Context, projectID int64, id string) (Conversation, error)
	// AgentAnalysis returns the id of the conversation's agent and the
	// agent's analysis settings as stored (JSON, for ParseAnalysisSettings);
	// not found when the agent is gone.
	AgentAnalysis(ctx context.Context, projectID int64, conversationID string) (agentID int64, settings []byte, err error)
	// AddPendingAnalysis writes the conversation's pending analysis, marked
	// as waiting for its call's log when awaitLog, and reports whether it
	// did: false when the conversation has one already.
	AddPendingAnalysis(ctx context.Context, projectID, agentID int64, conversationID string, awaitLog bool) (bool, error)
	// AddSkippedAnalysis writes the conversation's analysis as skipped
	// (nothing to analyse), unless it has one already.
	AddSkippedAnalysis(ctx context.Context, projectID, agentID int64, conversationID string) error
	// EndLogWait ends the wait of the conversation's pending analysis for
	// its call's log, storing it skipped when skip, and reports whether it
	// was waiting.
	EndLogWait(ctx context.Context, projectID int64, conversationID string, skip bool) (bool, error)
	// CampaignCall returns the campaign dial that placed the call callID,
	// with its contact and campaign as the transaction sees them (the
	// contact locked until it ends); not found for a call no campaign
	// placed.
	CampaignCall(ctx context.Context, projectID, callID int64) (CampaignCall, error)
	// SettleCampaignDial records what a dial came to and what becomes of
	// its contact (see DialSettlement), then emits
	// campaign.contact.completed when the contact is final, completes the
	// campaign when nobody is left to call (campaign.completed), or wakes
	// its dialing when contacts are due.
	SettleCampaignDial(ctx context.Context, s DialSettlement) error
}

// ConversationFollowUp is what follows, in the store transaction that made
// it, the start or the end of the conversation id of the project.
type ConversationFollowUp func(ctx context.Context, tx ConversationTx, projectID int64, id string) error

// CallFollowUp is what follows, in the store transaction that made it, a
// report about a call: its status was previous ("" for a call new to the
// store) and is now call.Status. It follows every report, whether or not
// it changed the status, since a report may bring what something waits
// for (the relay's end brings the call's log).
type CallFollowUp func(ctx context.Context, tx ConversationTx, previous string, call Call) error
