package conversation_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Every way a widget conversation leaves live writes its pending analysis
// with one analyze_conversation job in the same transaction, when the
// agent asks for analysis: session_ended, the sweeper's abandon (idle and
// never connected). (A call's: TestCallAnalysisFollowsItsLog.) An agent that asks
// for nothing gets none. A result is stored once: a second FinishAnalysis
// (a job that ran twice) changes nothing and emits nothing more. Deleting
// the conversation deletes its analysis.
func TestAnalysisFollowsEveryEnd(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		enqueued := analysisJobs(db)
		f := newFixture(t, db)
		ep, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: f.p1.ID, URL: "https://hooks.example.com/x",
			Events: []string{agentline.EventConversationAnalyzed}, Enabled: true, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
		if err != nil {
			t.Fatal(err)
		}
		ada := analysing(t, db, f.a1)
		quiet := mustAgent(t, db, f.p1.ID, "Quiet") // asks for no analysis

		start := time.Now().UTC().Add(-time.Hour)
		session := func(id string, agent int64) {
			t.Helper()
			if _, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: id, ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: agent,
				Provider: agentline.ProviderOpenAI, StartedAt: start}, conversation.Started); err != nil {
				t.Fatal(err)
			}
		}
		session("ses_ended", ada.ID)
		session("ses_idle", ada.ID)
		session("ses_quiet", quiet.ID)
		for _, id := range []string{"ses_ended", "ses_quiet"} {
			if err := db.AddSessionEvents(ctx, f.p1.ID, id, []agentline.SessionEvent{{Type: agentline.EventSessionEnded, At: start.Add(time.Minute)}}, conversation.Ended); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.CreateLead(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLiveChat, Answers: map[string]any{}},
			&agentline.WidgetSession{ID: "ses_gate", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: ada.ID}); err != nil {
			t.Fatal(err)
		}
		// The idle session reports once, so the sweeper sees it connected.
		if err := db.AddSessionEvents(ctx, f.p1.ID, "ses_idle", []agentline.SessionEvent{{Type: agentline.EventTranscript, At: start.Add(time.Second),
			Data: json.RawMessage(`{"role":"user","text":"hi"}`)}}, conversation.Ended); err != nil {
			t.Fatal(err)
		}
		if n, err := db.AbandonIdleSessions(ctx, time.Now().UTC(), time.Now().UTC().Add(time.Minute), conversation.Ended); err != nil || n != 2 {
			t.Fatalf("sweep = %d %v, want 2", n, err)
		}
		want := []string{"ses_ended", "ses_idle", "ses_gate"}
		got := map[string]bool{}
		jobs := enqueued()
		for _, j := range jobs {
			if j.ProjectID != f.p1.ID || got[j.ConversationID] {
				t.Fatalf("job %+v (twice, or of another project)", j)
			}
			got[j.ConversationID] = true
		}
		for _, id := range want {
			c, err := db.Conversation(ctx, f.p1.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			if !got[id] || c.Analysis == nil || c.Analysis.Status != agentline.AnalysisPending {
				t.Fatalf("%s: job %t, analysis %+v", id, got[id], c.Analysis)
			}
		}
		if len(jobs) != len(want) {
			t.Fatalf("%d jobs, want %d", len(jobs), len(want))
		}
		if c, _ := db.Conversation(ctx, f.p1.ID, "ses_quiet"); c.Analysis != nil {
			t.Fatalf("an agent that asks for nothing got %+v", c.Analysis)
		}

		yes := true
		done := agentline.Analysis{Status: agentline.AnalysisDone, Summary: "Hi.", Success: &yes, SuccessReason: "ok",
			Data: json.RawMessage(`{"order_id":"A1"}`), Model: "m"}
		for i, wantStored := range []bool{true, false} {
			stored, err := db.FinishAnalysis(ctx, f.p1.ID, "ses_ended", done)
			if err != nil || stored != wantStored {
				t.Fatalf("finish #%d = %t %v", i+1, stored, err)
			}
		}
		if _, err := db.FinishAnalysis(ctx, f.p2.ID, "ses_idle", done); err != nil {
			t.Fatal(err)
		}
		if c, _ := db.Conversation(ctx, f.p1.ID, "ses_idle"); c.Analysis.Status != agentline.AnalysisPending {
			t.Fatalf("another project's FinishAnalysis changed %+v", c.Analysis)
		}
		if err := db.NoteAnalysisAttempt(ctx, f.p1.ID, "ses_idle", "503"); err != nil {
			t.Fatal(err)
		}
		idle, _ := db.Conversation(ctx, f.p1.ID, "ses_idle")
		if idle.Analysis.Attempts != 1 || idle.Analysis.Error != "503" {
			t.Fatalf("noted attempt: %+v", idle.Analysis)
		}
		c, _ := db.Conversation(ctx, f.p1.ID, "ses_ended")
		if a := c.Analysis; a.Status != agentline.AnalysisDone || a.Summary != "Hi." || a.Success == nil || !*a.Success ||
			string(a.Data) != `{"order_id":"A1"}` || a.Attempts != 1 || a.FinishedAt == nil {
			t.Fatalf("stored analysis %+v", a)
		}
		list, err := db.WebhookDeliveries(ctx, f.p1.ID, ep.ID, 50, 0)
		if err != nil || len(list) != 1 {
			t.Fatalf("%d conversation.analyzed deliveries (%v), want 1", len(list), err)
		}
		if err := db.DeleteConversation(ctx, f.p1.ID, "ses_ended"); err != nil {
			t.Fatal(err)
		}
		session("ses_ended", ada.ID) // the same id again: no analysis left behind
		if c, _ := db.Conversation(ctx, f.p1.ID, "ses_ended"); c.Analysis != nil {
			t.Fatalf("the deleted conversation's analysis remains: %+v", c.Analysis)
		}
	})
}

// analysisJobs connects db's outbox to a stand-in queue and returns what
// reads the analyze_conversation jobs enqueued so far.
func analysisJobs(db *store.DB) func() []agentline.AnalyzeConversation {
	var mu sync.Mutex
	var jobs []agentline.AnalyzeConversation
	db.SetOutbox(store.OutboxOptions{Enqueue: func(_ context.Context, _ *sql.Tx, js []agentline.Job) error {
		mu.Lock()
		defer mu.Unlock()
		for _, j := range js {
			if a, ok := j.(agentline.AnalyzeConversation); ok {
				jobs = append(jobs, a)
			}
		}
		return nil
	}})
	return func() []agentline.AnalyzeConversation {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(jobs)
	}
}

// analysing returns a with the default analysis switched on.
func analysing(t *testing.T, db *store.DB, a agentline.Agent) agentline.Agent {
	t.Helper()
	a.Analysis = agentline.DefaultAnalysis()
	a, err := db.UpdateAgent(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
