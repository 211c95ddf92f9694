package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentline/agentline"
)

const testRunColumns = `id, project_id, agent_id, version, status, passed, failed, errors, created_at, finished_at`

func scanTestRun(row interface{ Scan(...any) error }) (agentline.TestRun, error) {
	var r agentline.TestRun
	var version sql.NullInt64
	var finished sql.NullTime
	err := row.Scan(&r.ID, &r.ProjectID, &r.AgentID, &version, &r.Status, &r.Passed, &r.Failed, &r.Errors,
		utc(&r.CreatedAt), &finished)
	if version.Valid {
		v := int(version.Int64)
		r.Version = &v
	}
	r.FinishedAt = nullTime(finished)
	return r, err
}

const testResultColumns = `id, run_id, scenario_id, scenario_name, status, reason, transcript, turns, tool_calls, turn_ms, attempts, finished_at`

func scanTestResult(row interface{ Scan(...any) error }) (agentline.TestResult, error) {
	var r agentline.TestResult
	var transcript, calls, turnMS string
	var finished sql.NullTime
	err := row.Scan(&r.ID, &r.RunID, &r.ScenarioID, &r.ScenarioName, &r.Status, &r.Reason, &transcript, &r.Turns,
		&calls, &turnMS, &r.Attempts, &finished)
	if err != nil {
		return r, err
	}
	r.FinishedAt = nullTime(finished)
	switch r.Status {
	case agentline.TestResultPassed, agentline.TestResultFailed:
		passed := r.Status == agentline.TestResultPassed
		r.Passed = &passed
	}
	for _, c := range []struct {
		col string
		dst any
	}{{transcript, &r.Transcript}, {calls, &r.ToolCalls}, {turnMS, &r.TurnMS}} {
		if err := json.Unmarshal([]byte(c.col), c.dst); err != nil {
			return r, fmt.Errorf("test result %d: %w", r.ID, err)
		}
	}
	r.Transcript, r.ToolCalls, r.TurnMS = nonNil(r.Transcript), nonNil(r.ToolCalls), nonNil(r.TurnMS)
	return r, nil
}

// CreateTestRun starts a run of the agent's scenarios named by
// scenarioIDs (all of them when empty) with version (nil: the agent's
// current settings): the run, one pending result per scenario holding a
// copy of it, and one PlayTestScenario job per result, in one transaction.
func (db *DB) CreateTestRun(ctx context.Context, projectID, agentID int64, version *int, scenarioIDs []int64) (agentline.TestRun, error) {
	var runID int64
	err := db.tx(ctx, func(c conn) error {
		scenarios, err := runScenarios(ctx, c, projectID, agentID, scenarioIDs)
		if err != nil {
			return err
		}
		now := db.now()
		if err := c.queryRow(ctx, `INSERT INTO test_runs (project_id, agent_id, version, status, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			projectID, agentID, version, agentline.TestRunRunning, now).Scan(&runID); err != nil {
			return fmt.Errorf("create test run: %w", err)
		}
		jobs := make([]agentline.Job, 0, len(scenarios))
		for _, s := range scenarios {
			copied, _ := json.Marshal(s) // plain data always encodes
			var id int64
			if err := c.queryRow(ctx, `INSERT INTO test_results (run_id, project_id, scenario_id, scenario, scenario_name, status)
				VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, runID, projectID, s.ID, string(copied), s.Name, agentline.TestResultPending).Scan(&id); err != nil {
				return fmt.Errorf("create test result: %w", err)
			}
			jobs = append(jobs, agentline.PlayTestScenario{ProjectID: projectID, RunID: runID, ResultID: id})
		}
		if err := c.audit(ctx, change(projectID, "test_run.create", "test_run", runID,
			map[string][2]any{"agent_id": {nil, agentID}, "version": {nil, version}, "scenarios": {nil, len(scenarios)}})); err != nil {
			return err
		}
		return db.outboxOn(c).Enqueue(ctx, jobs...)
	})
	if err != nil {
		return agentline.TestRun{}, err
	}
	return db.TestRun(ctx, projectID, runID)
}

// runScenarios loads the scenarios a new run plays: every one of the
// agent's, or those of ids (each must be one of the agent's).
func runScenarios(ctx context.Context, c conn, projectID, agentID int64, ids []int64) ([]agentline.TestScenario, error) {
	var agent int64
	if err := c.queryRow(ctx, `SELECT id FROM agents WHERE project_id = ? AND id = ?`, projectID, agentID).Scan(&agent); err != nil {
		return nil, notFound(err, "agent")
	}
	all, err := queryAll(ctx, c, scanScenario,
		`SELECT `+scenarioColumns+` FROM test_scenarios WHERE project_id = ? AND agent_id = ? ORDER BY id`, projectID, agentID)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		if len(all) == 0 {
			return nil, agentline.Invalid("scenario_ids", "the agent has no test scenarios yet")
		}
		return all, nil
	}
	byID := map[int64]agentline.TestScenario{}
	for _, s := range all {
		byID[s.ID] = s
	}
	var out []agentline.TestScenario
	seen := map[int64]bool{}
	for _, id := range ids {
		s, ok := byID[id]
		if !ok {
			return nil, agentline.Invalid("scenario_ids", "scenario %d is not one of the agent's", id)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// TestRun returns a run of the project with its results and its
// comparison with the previous run of the same scenarios.
func (db *DB) TestRun(ctx context.Context, projectID, id int64) (agentline.TestRun, error) {
	r, err := scanTestRun(db.reader().queryRow(ctx, `SELECT `+testRunColumns+` FROM test_runs WHERE project_id = ? AND id = ?`, projectID, id))
	if err != nil {
		return r, notFound(err, "test run")
	}
	if r.Results, err = db.testResults(ctx, r.ID); err != nil {
		return r, err
	}
	r.Comparison, err = db.compareRun(ctx, r)
	return r, err
}

func (db *DB) testResults(ctx context.Context, runID int64) ([]agentline.TestResult, error) {
	return queryAll(ctx, db.reader(), scanTestResult, `SELECT `+testResultColumns+` FROM test_results WHERE run_id = ? ORDER BY id`, runID)
}

// TestRuns lists a page of the agent's runs (without their results),
// oldest first, after the id after.
func (db *DB) TestRuns(ctx context.Context, projectID, agentID, after int64, limit int) ([]agentline.TestRun, error) {
	return queryAll(ctx, db.reader(), scanTestRun, `SELECT `+testRunColumns+` FROM test_runs
		WHERE project_id = ? AND agent_id = ? AND id > ? ORDER BY id LIMIT ?`, projectID, agentID, after, limit)
}

// compareRun sets r's results beside those of the latest completed run of
// the same agent, before r, that played any of r's scenarios; nil when
// there is none.
func (db *DB) compareRun(ctx context.Context, r agentline.TestRun) (*agentline.TestComparison, error) {
	if len(r.Results) == 0 {
		return nil, nil
	}
	args := []any{r.ProjectID, r.AgentID, r.ID, agentline.TestRunCompleted}
	marks := make([]string, len(r.Results))
	for i, res := range r.Results {
		marks[i] = "?"
		args = append(args, res.ScenarioID)
	}
	var prev int64
	err := db.reader().queryRow(ctx, `SELECT id FROM test_runs t WHERE project_id = ? AND agent_id = ? AND id < ? AND status = ?
		AND EXISTS (SELECT 1 FROM test_results x WHERE x.run_id = t.id AND x.scenario_id IN (`+strings.Join(marks, ", ")+`))
		ORDER BY id DESC LIMIT 1`, args...).Scan(&prev)
	if agentline.ErrorCode(notFound(err, "run")) == agentline.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("previous test run: %w", err)
	}
	before, err := db.testResults(ctx, prev)
	if err != nil {
		return nil, err
	}
	was := map[int64]string{}
	for _, b := range before {
		was[b.ScenarioID] = b.Status
	}
	cmp := &agentline.TestComparison{PreviousRunID: prev}
	for _, res := range r.Results {
		cmp.Scenarios = append(cmp.Scenarios, agentline.TestScenarioDiff{ScenarioID: res.ScenarioID, Name: res.ScenarioName,
			Previous: was[res.ScenarioID], Current: res.Status, Changed: was[res.ScenarioID] != res.Status})
	}
	return cmp, nil
}
