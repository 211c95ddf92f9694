package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Scenarios and runs are scoped to their project; a run holds a pending
// result and a job per scenario, completes with its counts when its last
// result is stored (once), and is compared with the previous run of the
// same scenarios.
func TestTestRuns(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		var queued []agentline.Job
		db.SetOutbox(store.OutboxOptions{Enqueue: func(_ context.Context, _ *sql.Tx, js []agentline.Job) error {
			queued = append(queued, js...)
			return nil
		}})
		if _, err := db.CreateTestRun(ctx, f.p1.ID, f.a1.ID, nil, nil); code(err) != agentline.EInvalid {
			t.Fatalf("a run with no scenarios: %v", err)
		}
		mk := func(name string) agentline.TestScenario {
			s, err := db.CreateTestScenario(ctx, agentline.TestScenario{ProjectID: f.p1.ID, AgentID: f.a1.ID, Name: name,
				Persona: "a customer", Goal: "book", SuccessCriteria: "booked", MaxTurns: 4, Variables: map[string]string{"k": "v"}})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		a, b := mk("a"), mk("b")
		if a.Variables["k"] != "v" || a.MaxTurns != 4 {
			t.Fatalf("created %+v", a)
		}
		if _, err := db.CreateTestScenario(ctx, agentline.TestScenario{ProjectID: f.p1.ID, AgentID: f.a1.ID, Name: "a"}); code(err) != agentline.EConflict {
			t.Fatalf("same name: %v", err)
		}
		if _, err := db.CreateTestScenario(ctx, agentline.TestScenario{ProjectID: f.p2.ID, AgentID: f.a1.ID, Name: "x"}); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's agent: %v", err)
		}
		if _, err := db.TestScenario(ctx, f.p2.ID, a.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's scenario: %v", err)
		}
		a.Goal = "cancel"
		if a, err := db.UpdateTestScenario(ctx, a); err != nil || a.Goal != "cancel" {
			t.Fatalf("update: %+v %v", a, err)
		}
		if _, err := db.CreateTestRun(ctx, f.p1.ID, f.a1.ID, nil, []int64{a.ID, 1 << 40}); code(err) != agentline.EInvalid {
			t.Fatalf("a scenario of nobody: %v", err)
		}
		if _, err := db.CreateTestRun(ctx, f.p2.ID, f.a1.ID, nil, nil); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's agent: %v", err)
		}
		v := 3
		run1 := play(t, db, f.p1.ID, f.a1.ID, &v, nil, &queued, agentline.TestResultPassed, agentline.TestResultFailed)
		if run1.Passed != 1 || run1.Failed != 1 || run1.Status != agentline.TestRunCompleted || *run1.Version != 3 || run1.Comparison != nil {
			t.Fatalf("run 1: %+v", run1)
		}
		run2 := play(t, db, f.p1.ID, f.a1.ID, nil, []int64{b.ID}, &queued, agentline.TestResultPassed)
		cmp := run2.Comparison
		if cmp == nil || cmp.PreviousRunID != run1.ID || len(cmp.Scenarios) != 1 || cmp.Scenarios[0].Previous != agentline.TestResultFailed || !cmp.Scenarios[0].Changed {
			t.Fatalf("comparison %+v", cmp)
		}
		if _, err := db.TestRun(ctx, f.p2.ID, run1.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's run: %v", err)
		}
		list, err := db.TestRuns(ctx, f.p1.ID, f.a1.ID, run1.ID, 10)
		if err != nil || len(list) != 1 || list[0].ID != run2.ID {
			t.Fatalf("runs after the first: %+v %v", list, err)
		}
		if err := db.DeleteTestScenario(ctx, f.p1.ID, b.ID); err != nil {
			t.Fatal(err)
		}
		if r, err := db.TestRun(ctx, f.p1.ID, run2.ID); err != nil || r.Results[0].ScenarioName != "b" {
			t.Fatalf("a run after its scenario's deletion: %+v %v", r, err)
		}
	})
}

// play starts a run and stores the given outcomes of its results through
// the job's steps.
func play(t *testing.T, db *store.DB, projectID, agentID int64, version *int, ids []int64, queued *[]agentline.Job, outcomes ...string) agentline.TestRun {
	t.Helper()
	ctx := context.Background()
	*queued = nil
	run, err := db.CreateTestRun(ctx, projectID, agentID, version, ids)
	if err != nil || len(run.Results) != len(outcomes) || len(*queued) != len(outcomes) || run.Status != agentline.TestRunRunning ||
		run.Results[0].Transcript == nil || run.Results[0].ToolCalls == nil || run.Results[0].TurnMS == nil {
		t.Fatalf("create run: %+v %v (%d jobs)", run, err, len(*queued))
	}
	for i, j := range *queued {
		job := j.(agentline.PlayTestScenario)
		p, err := db.BeginTestPlay(ctx, projectID, job.ResultID)
		if err != nil || p.Status != agentline.TestResultPending || p.Attempts != 1 || p.Run.ID != run.ID {
			t.Fatalf("begin: %+v %v", p, err)
		}
		res := agentline.TestResult{Status: outcomes[i], Reason: "because", Turns: 1,
			Transcript: []agentline.Line{{Speaker: "user", Text: "hi"}}, TurnMS: []int64{5}}
		if ok, err := db.FinishTestPlay(ctx, projectID, job.ResultID, res); !ok || err != nil {
			t.Fatalf("finish: %v %v", ok, err)
		}
		if ok, err := db.FinishTestPlay(ctx, projectID, job.ResultID, res); ok || err != nil {
			t.Fatalf("finish twice: %v %v", ok, err)
		}
	}
	run, err = db.TestRun(ctx, projectID, run.ID)
	if err != nil || run.FinishedAt == nil || run.Results[0].Transcript[0].Text != "hi" || run.Results[0].Passed == nil {
		t.Fatalf("run: %+v %v", run, err)
	}
	return run
}
