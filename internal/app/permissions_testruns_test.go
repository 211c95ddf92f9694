package app_test

import (
	"net/http"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// testRunScenarios are the permission matrix's rows of test scenarios and
// runs: members read them, writers make and change them, only the owner
// deletes a scenario, and another project's are not found.
func testRunScenarios(t *testing.T, s *apptest.Server, f apptest.Fixture) []apptest.Scenario {
	t.Helper()
	var sc, other agentline.TestScenario
	body := func(name string) map[string]any {
		return map[string]any{"name": name, "persona": "A customer", "goal": "Learn when it ships", "success_criteria": "The agent says when."}
	}
	s.Must(t, http.StatusCreated, "POST", "/api/agents/"+itoa(f.IDs["agent_id"])+"/scenarios", f.Tokens["owner"], body("ships"), &sc)
	s.Must(t, http.StatusCreated, "POST", "/api/agents/"+itoa(f.IDs["other_agent_id"])+"/scenarios", f.Tokens["outsider"], body("Elsewhere"), &other)
	var run, otherRun agentline.TestRun
	s.Must(t, http.StatusCreated, "POST", "/api/agents/"+itoa(f.IDs["agent_id"])+"/test-runs", f.Tokens["owner"], map[string]any{}, &run)
	s.Must(t, http.StatusCreated, "POST", "/api/agents/"+itoa(f.IDs["other_agent_id"])+"/test-runs", f.Tokens["outsider"], map[string]any{}, &otherRun)
	f.IDs["scenario_id"], f.IDs["other_scenario_id"] = sc.ID, other.ID
	f.IDs["run_id"], f.IDs["other_run_id"] = run.ID, otherRun.ID

	var out []apptest.Scenario
	add := func(sc ...apptest.Scenario) { out = append(out, sc...) }
	add(every("GET", "/api/agents/{agent_id}/scenarios", nil, readers)...)
	add(every("POST", "/api/agents/{agent_id}/scenarios", body("refund"), map[string]int{"viewer": 403, "editor": 201, "outsider": 404})...)
	add(apptest.Scenario{Method: "POST", URL: "/api/agents/{agent_id}/scenarios", As: "owner", Body: body("hours"), Status: 201})
	add(every("GET", "/api/scenarios/{scenario_id}", nil, readers)...)
	add(every("PATCH", "/api/scenarios/{scenario_id}", map[string]any{"max_turns": 3}, writers)...)
	add(every("GET", "/api/agents/{agent_id}/test-runs", nil, readers)...)
	add(every("POST", "/api/agents/{agent_id}/test-runs", map[string]any{"scenario_ids": []int64{sc.ID}}, creators)...)
	add(every("GET", "/api/test-runs/{run_id}", nil, readers)...)
	add(every("DELETE", "/api/scenarios/{scenario_id}", nil, refusedDeletes)...)
	add(apptest.Scenario{Method: "DELETE", URL: "/api/scenarios/{scenario_id}", As: "owner", Status: 204})
	for _, sc := range []apptest.Scenario{
		{Method: "GET", URL: "/api/agents/{other_agent_id}/scenarios"},
		{Method: "POST", URL: "/api/agents/{other_agent_id}/scenarios", Body: body("x")},
		{Method: "GET", URL: "/api/scenarios/{other_scenario_id}"},
		{Method: "PATCH", URL: "/api/scenarios/{other_scenario_id}", Body: map[string]any{"max_turns": 3}},
		{Method: "DELETE", URL: "/api/scenarios/{other_scenario_id}"},
		{Method: "GET", URL: "/api/agents/{other_agent_id}/test-runs"},
		{Method: "POST", URL: "/api/agents/{other_agent_id}/test-runs", Body: map[string]any{}},
		{Method: "GET", URL: "/api/test-runs/{other_run_id}"},
	} {
		sc.As, sc.Status, sc.Code, sc.NotContains = "owner", 404, agentline.ENotFound, []string{"Elsewhere", "Eve"}
		add(sc)
	}
	return out
}
