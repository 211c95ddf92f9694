package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentline/agentline"
)

// BeginTestPlay loads a result of the project to play and counts one more
// attempt at it when it is still pending. A result played before a
// restart cut it short is played again from its start: its transcript so
// far is dropped with this attempt.
func (db *DB) BeginTestPlay(ctx context.Context, projectID, resultID int64) (agentline.TestPlay, error) {
	var p agentline.TestPlay
	err := db.tx(ctx, func(c conn) error {
		var runID int64
		var scenario string
		if err := c.queryRow(ctx, `SELECT run_id, scenario, status, attempts FROM test_results WHERE project_id = ? AND id = ?`,
			projectID, resultID).Scan(&runID, &scenario, &p.Status, &p.Attempts); err != nil {
			return notFound(err, "test result")
		}
		if err := json.Unmarshal([]byte(scenario), &p.Scenario); err != nil {
			return fmt.Errorf("test result %d scenario: %w", resultID, err)
		}
		run, err := scanTestRun(c.queryRow(ctx, `SELECT `+testRunColumns+` FROM test_runs WHERE id = ?`, runID))
		if err != nil {
			return notFound(err, "test run")
		}
		p.Run = run
		if p.Status != agentline.TestResultPending {
			return nil
		}
		p.Attempts++
		_, err = c.exec(ctx, `UPDATE test_results SET attempts = ?, transcript = '[]', tool_calls = '[]', turn_ms = '[]', turns = 0
			WHERE id = ?`, p.Attempts, resultID)
		return err
	})
	return p, err
}

// FinishTestPlay stores the outcome of a pending result (its Status
// passed, failed or error) and, when it was the run's last pending
// result, completes the run with its counts and emits test_run.completed,
// all in one transaction. It reports false when the result was no longer
// pending (another attempt stored it).
func (db *DB) FinishTestPlay(ctx context.Context, projectID, resultID int64, r agentline.TestResult) (bool, error) {
	transcript, _ := json.Marshal(nonNil(r.Transcript))
	calls, _ := json.Marshal(nonNil(r.ToolCalls))
	turnMS, _ := json.Marshal(nonNil(r.TurnMS))
	stored := false
	err := db.tx(ctx, func(c conn) error {
		now := db.now()
		res, err := c.exec(ctx, `UPDATE test_results SET status = ?, reason = ?, transcript = ?, turns = ?, tool_calls = ?, turn_ms = ?, finished_at = ?
			WHERE project_id = ? AND id = ? AND status = ?`, r.Status, r.Reason, string(transcript), r.Turns, string(calls), string(turnMS), now,
			projectID, resultID, agentline.TestResultPending)
		if err := mustAffect(res, err, "pending test result"); err != nil {
			if agentline.ErrorCode(err) == agentline.ENotFound {
				return nil
			}
			return err
		}
		stored = true
		return db.completeRunIfDone(ctx, c, projectID, resultID)
	})
	return stored, err
}

// completeRunIfDone completes the run of resultID when none of its results
// is pending any more.
func (db *DB) completeRunIfDone(ctx context.Context, c conn, projectID, resultID int64) error {
	var runID int64
	var pending, passed, failed, errs int
	err := c.queryRow(ctx, `SELECT run_id,
		SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'passed' THEN 1 ELSE 0 END),
		SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END)
		FROM test_results WHERE run_id = (SELECT run_id FROM test_results WHERE id = ?) GROUP BY run_id`, resultID).
		Scan(&runID, &pending, &passed, &failed, &errs)
	if err != nil || pending > 0 {
		return err
	}
	now := db.now()
	res, err := c.exec(ctx, `UPDATE test_runs SET status = ?, passed = ?, failed = ?, errors = ?, finished_at = ?
		WHERE project_id = ? AND id = ? AND status = ?`, agentline.TestRunCompleted, passed, failed, errs, now,
		projectID, runID, agentline.TestRunRunning)
	if err := mustAffect(res, err, "running test run"); err != nil {
		return err
	}
	run, err := scanTestRun(c.queryRow(ctx, `SELECT `+testRunColumns+` FROM test_runs WHERE id = ?`, runID))
	if err != nil {
		return err
	}
	e, err := agentline.NewEvent(projectID, agentline.EventTestRunCompleted, fmt.Sprintf("test_run:%d", runID), agentline.TestRunEventData{
		RunID: run.ID, AgentID: run.AgentID, Version: run.Version, Passed: passed, Failed: failed, Errors: errs, FinishedAt: run.FinishedAt})
	if err != nil {
		return err
	}
	return db.outboxOn(c).Emit(ctx, e)
}

// nonNil is list, or an empty list for nil, so a column never holds null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
