package conversation_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A call's analysis starts once its log is whole, whoever ends the call
// first. A call nobody answered is skipped at once. The relay's end record
// brings the rest of the log: a call it ends is skipped when the caller
// never spoke, else its job goes in with it; a call the carrier ended first
// (or a hang-up, or reconciliation) waits, pending and with no job, and the
// relay's record ends the wait the same way. A wait the log never ends
// (the relay's instance died) gets its job from the conversation sweep
// after agentline.CallLogWait. A transferred call's relay ends with the
// call in progress: nothing follows until the carrier ends it, and then
// its analysis starts at once, its log whole since the transfer.
func TestCallAnalysisFollowsItsLog(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		enqueued := analysisJobs(db)
		f := newFixture(t, db)
		ada := analysing(t, db, f.a1)
		call := func(sid string) string {
			t.Helper()
			c, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: ada.ID, CallSID: sid, Direction: agentline.CallOutbound,
				From: "+14155550100", To: "+14155550199", Status: agentline.CallQueued}, 10)
			if err != nil {
				t.Fatal(err)
			}
			report(t, db, agentline.CallEvent{CallSID: sid, Status: agentline.CallInProgress}, conversation.CallChanged)
			return agentline.CallConversationID(c.ID)
		}
		carrierEnds := func(sid string) {
			t.Helper()
			for range 2 { // a repeated final report starts nothing more
				report(t, db, agentline.CallEvent{CallSID: sid, Status: agentline.CallCompleted}, conversation.CallChanged)
			}
		}
		relayEndsFor := func(reason, sid, status string, spoke bool) {
			t.Helper()
			report(t, db, agentline.CallEvent{CallSID: sid, Status: status, EndReason: reason,
				Log: []agentline.CallLogEntry{{Type: agentline.EventTranscript, Role: "agent", Text: "Hello", At: time.Now().UTC()}}},
				conversation.RelayEnded(spoke))
		}
		relayEnds := func(sid, status string, spoke bool) { t.Helper(); relayEndsFor("caller_hangup", sid, status, spoke) }
		check := func(id, status string, wantJobs int) {
			t.Helper()
			c, err := db.Conversation(ctx, f.p1.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, j := range enqueued() {
				if j.ConversationID == id {
					n++
				}
			}
			if c.Analysis == nil || c.Analysis.Status != status || n != wantJobs {
				t.Fatalf("%s: analysis %+v with %d jobs, want %s with %d", id, c.Analysis, n, status, wantJobs)
			}
			if status == agentline.AnalysisSkipped && c.Analysis.FinishedAt == nil {
				t.Fatalf("%s: skipped without a finish time: %+v", id, c.Analysis)
			}
		}

		busy, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: ada.ID, CallSID: "CAbusy", Direction: agentline.CallOutbound,
			From: "+14155550100", To: "+14155550199", Status: agentline.CallQueued}, 10)
		if err != nil {
			t.Fatal(err)
		}
		report(t, db, agentline.CallEvent{CallSID: "CAbusy", Status: agentline.CallBusy}, conversation.CallChanged)
		check(agentline.CallConversationID(busy.ID), agentline.AnalysisSkipped, 0)

		// The relay first: its record ends the call with the whole log.
		silent, spoken := call("CArelay0"), call("CArelay1")
		relayEnds("CArelay0", agentline.CallCompleted, false)
		relayEnds("CArelay1", agentline.CallCompleted, true)
		carrierEnds("CArelay0")
		carrierEnds("CArelay1")
		check(silent, agentline.AnalysisSkipped, 0)
		check(spoken, agentline.AnalysisPending, 1)

		// The carrier first: the analysis waits for the relay's record.
		silent, spoken = call("CAcarrier0"), call("CAcarrier1")
		carrierEnds("CAcarrier0")
		carrierEnds("CAcarrier1")
		check(silent, agentline.AnalysisPending, 0)
		check(spoken, agentline.AnalysisPending, 0)
		relayEnds("CAcarrier0", agentline.CallCompleted, false)
		relayEnds("CAcarrier1", agentline.CallCompleted, true)
		check(silent, agentline.AnalysisSkipped, 0)
		check(spoken, agentline.AnalysisPending, 1)
		relayEnds("CAcarrier1", agentline.CallCompleted, true) // a record applied twice queues nothing more
		check(spoken, agentline.AnalysisPending, 1)

		// A transfer: the relay ends at the transfer, the call goes on; the
		// carrier's end then has the whole log already, and analyses it.
		transferred := call("CAtransfer")
		relayEndsFor(agentline.EndReasonTransferred, "CAtransfer", agentline.CallInProgress, true)
		if c, _ := db.Conversation(ctx, f.p1.ID, transferred); c.Analysis != nil {
			t.Fatalf("a call still in progress has an analysis: %+v", c.Analysis)
		}
		carrierEnds("CAtransfer")
		check(transferred, agentline.AnalysisPending, 1)

		// A relay that never reports (its instance died): the carrier's end
		// waits for a log that is not coming, and the sweep queues it.
		lost := call("CAlost")
		carrierEnds("CAlost")
		check(lost, agentline.AnalysisPending, 0)
		sweep := func(at time.Time) {
			t.Helper()
			s := &conversation.Sweeper{Store: db, IdleTimeout: time.Hour, ConnectTimeout: time.Hour, Now: func() time.Time { return at }}
			if err := s.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
		}
		sweep(time.Now().Add(agentline.CallLogWait - time.Second))
		check(lost, agentline.AnalysisPending, 0)
		sweep(time.Now().Add(agentline.CallLogWait + time.Second))
		sweep(time.Now().Add(agentline.CallLogWait + 2*time.Second))
		check(lost, agentline.AnalysisPending, 1)
		if n, err := db.QueueAnalysesAwaitingLog(ctx, time.Now().Add(time.Hour), 10); err != nil || n != 0 {
			t.Fatalf("a later sweep queued %d (%v) more", n, err)
		}
		relayEnds("CAlost", agentline.CallCompleted, false) // too late: the job has it
		check(lost, agentline.AnalysisPending, 1)
	})
}

func report(t *testing.T, db *store.DB, e agentline.CallEvent, then agentline.CallFollowUp) {
	t.Helper()
	if _, err := db.ApplyCallEvent(context.Background(), e, then); err != nil {
		t.Fatal(err)
	}
}
