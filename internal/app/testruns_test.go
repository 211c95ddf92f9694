package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// testRunSetup makes a project, an agent with a webhook tool served by a
// real HTTP server on loopback, and the three scenarios of the tests: one
// that passes, one whose goal says it fails, one more that passes.
func testRunSetup(t *testing.T, s *apptest.Server, tok string) (agentline.Agent, *atomic.Int32, []agentline.TestScenario) {
	t.Helper()
	var hits atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"shipped tomorrow"}`)
	}))
	t.Cleanup(hook.Close)
	a, scenarios, _ := testRunSetupWith(t, s, tok, hook.URL)
	return a, &hits, scenarios
}

// testRunSetupWith is testRunSetup with the tool's webhook at hookURL.
func testRunSetupWith(t *testing.T, s *apptest.Server, tok, hookURL string) (agentline.Agent, []agentline.TestScenario, agentline.Project) {
	t.Helper()
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "instructions": "Help with orders."}, &a)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, map[string]any{"name": "order_status", "url": hookURL,
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []string{"order_id"}}}, nil)
	var out []agentline.TestScenario
	for _, sc := range []map[string]any{
		{"name": "ships", "persona": "A customer", "goal": "Learn when order {{order}} ships", "success_criteria": "The agent says when it ships.",
			"max_turns": 4, "variables": map[string]string{"order": "A-17"}},
		{"name": "refund", "persona": "An angry customer", "goal": "Get a refund, which must fail", "success_criteria": "The agent refuses politely."},
		{"name": "hours", "persona": "A visitor", "goal": "Ask the opening hours", "success_criteria": "The agent answers."},
	} {
		var got agentline.TestScenario
		s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/scenarios", tok, sc, &got)
		out = append(out, got)
	}
	return a, out, p
}

// waitRun polls a run until it completes (bounded).
func waitRun(t *testing.T, s *apptest.Server, tok string, id int64) agentline.TestRun {
	t.Helper()
	var run agentline.TestRun
	for i := 0; i < 600; i++ {
		s.Must(t, 200, "GET", "/api/test-runs/"+itoa(id), tok, nil, &run)
		if run.Status == agentline.TestRunCompleted {
			return run
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run %d did not complete: %+v", id, run)
	return run
}

// In the sandbox, a run of three scenarios plays each against the agent's
// realtime socket in text modality (the sandbox's), runs its webhook tool
// for real, and judges by the sandbox's rules: the scenario whose goal
// contains "fail" fails with its reason, the others pass; a second run is
// compared with the first.
func TestSandboxPlaysTestRun(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, "sqlite", map[string]string{"AGENTLINE_SANDBOX": "true", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	a, hits, scenarios := testRunSetup(t, s, tok)
	// A second save makes version 2, which the run names.
	s.Must(t, 200, "PATCH", "/api/agents/"+itoa(a.ID), tok, map[string]any{"instructions": "You answer questions about orders."}, nil)
	var run agentline.TestRun
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/test-runs", tok, map[string]any{"version": 2}, &run)
	if run.Status != agentline.TestRunRunning || len(run.Results) != 3 || *run.Version != 2 {
		t.Fatalf("started %+v", run)
	}
	run = waitRun(t, s, tok, run.ID)
	if run.Passed != 2 || run.Failed != 1 || run.Errors != 0 || run.Comparison != nil {
		t.Fatalf("run %+v", run)
	}
	byName := map[string]agentline.TestResult{}
	for _, r := range run.Results {
		byName[r.ScenarioName] = r
	}
	ships, refund := byName["ships"], byName["refund"]
	if ships.Status != agentline.TestResultPassed || ships.Passed == nil || !*ships.Passed || ships.Turns != 2 || len(ships.TurnMS) != 2 {
		t.Fatalf("ships: %+v", ships)
	}
	if ships.Transcript[0].Text != "Learn when order A-17 ships" || !strings.Contains(ships.Transcript[1].Text, "shipped tomorrow") {
		t.Fatalf("ships transcript: %+v", ships.Transcript)
	}
	if len(ships.ToolCalls) != 1 || ships.ToolCalls[0].Name != "order_status" || !strings.Contains(ships.ToolCalls[0].Result, "shipped tomorrow") {
		t.Fatalf("ships tool calls: %+v", ships.ToolCalls)
	}
	if refund.Status != agentline.TestResultFailed || !strings.Contains(refund.Reason, `contains "fail"`) {
		t.Fatalf("refund: %+v", refund)
	}
	if hits.Load() != 3 {
		t.Fatalf("the webhook was called %d times, want once per scenario", hits.Load())
	}
	var again agentline.TestRun
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/test-runs", tok, map[string]any{"scenario_ids": []int64{scenarios[1].ID}}, &again)
	again = waitRun(t, s, tok, again.ID)
	if c := again.Comparison; c == nil || c.PreviousRunID != run.ID || len(c.Scenarios) != 1 || c.Scenarios[0].Previous != "failed" || c.Scenarios[0].Changed {
		b, _ := json.Marshal(again.Comparison)
		t.Fatalf("comparison %s", b)
	}
	var page struct {
		TestRuns   []agentline.TestRun `json:"test_runs"`
		NextCursor *string             `json:"next_cursor"`
	}
	s.Must(t, 200, "GET", "/api/agents/"+itoa(a.ID)+"/test-runs?limit=1", tok, nil, &page)
	if len(page.TestRuns) != 1 || page.NextCursor == nil {
		t.Fatalf("page %+v", page)
	}
}
