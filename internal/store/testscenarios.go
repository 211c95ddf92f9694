package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentline/agentline"
)

const scenarioColumns = `id, project_id, agent_id, name, persona, goal, success_criteria, max_turns, variables, created_at, updated_at`

func scanScenario(row interface{ Scan(...any) error }) (agentline.TestScenario, error) {
	var s agentline.TestScenario
	var vars string
	err := row.Scan(&s.ID, &s.ProjectID, &s.AgentID, &s.Name, &s.Persona, &s.Goal, &s.SuccessCriteria, &s.MaxTurns,
		&vars, utc(&s.CreatedAt), utc(&s.UpdatedAt))
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal([]byte(vars), &s.Variables); err != nil {
		return s, fmt.Errorf("scenario %d variables: %w", s.ID, err)
	}
	if s.Variables == nil {
		s.Variables = map[string]string{}
	}
	return s, nil
}

func variablesJSON(v map[string]string) string {
	if v == nil {
		v = map[string]string{}
	}
	b, _ := json.Marshal(v) // a map of strings always encodes
	return string(b)
}

// CreateTestScenario stores a new scenario for s.AgentID, which must be an
// agent of s.ProjectID (otherwise not found). A name the agent's scenarios
// already use is a conflict.
func (db *DB) CreateTestScenario(ctx context.Context, s agentline.TestScenario) (agentline.TestScenario, error) {
	now := db.now()
	var id int64
	err := db.tx(ctx, func(c conn) error {
		if err := c.queryRow(ctx,
			`INSERT INTO test_scenarios (project_id, agent_id, name, persona, goal, success_criteria, max_turns, variables, created_at, updated_at)
			 SELECT project_id, id, ?, ?, ?, ?, ?, ?, ?, ? FROM agents WHERE project_id = ? AND id = ?
			 RETURNING id`,
			s.Name, s.Persona, s.Goal, s.SuccessCriteria, s.MaxTurns, variablesJSON(s.Variables), now, now,
			s.ProjectID, s.AgentID).Scan(&id); err != nil {
			return err
		}
		created, err := scenarioOn(ctx, s.ProjectID, id)(c)
		if err != nil {
			return err
		}
		return c.audit(ctx, change(s.ProjectID, "scenario.create", "scenario", id, agentline.AuditChanges(nil, created)))
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return s, agentline.NotFound("agent")
	case isUniqueViolation(err):
		return s, agentline.Errorf(agentline.EConflict, "the agent already has a scenario named %q", s.Name)
	case err != nil:
		return s, fmt.Errorf("create scenario: %w", err)
	}
	return db.TestScenario(ctx, s.ProjectID, id)
}

// TestScenarios lists the scenarios of an agent of the project, oldest
// first.
func (db *DB) TestScenarios(ctx context.Context, projectID, agentID int64) ([]agentline.TestScenario, error) {
	return queryAll(ctx, db.reader(), scanScenario,
		`SELECT `+scenarioColumns+` FROM test_scenarios WHERE project_id = ? AND agent_id = ? ORDER BY id`, projectID, agentID)
}

// TestScenario returns one scenario of the project.
func (db *DB) TestScenario(ctx context.Context, projectID, id int64) (agentline.TestScenario, error) {
	s, err := scanScenario(db.reader().queryRow(ctx,
		`SELECT `+scenarioColumns+` FROM test_scenarios WHERE project_id = ? AND id = ?`, projectID, id))
	return s, notFound(err, "test scenario")
}

// UpdateTestScenario saves every editable field of s, scoped to
// s.ProjectID.
func (db *DB) UpdateTestScenario(ctx context.Context, s agentline.TestScenario) (agentline.TestScenario, error) {
	var after agentline.TestScenario
	err := db.tx(ctx, func(c conn) error {
		var err error
		after, err = updateAudited(ctx, c, s.ProjectID, "scenario.update", "scenario", s.ID, scenarioOn(ctx, s.ProjectID, s.ID), func(c conn) error {
			_, err := c.exec(ctx,
				`UPDATE test_scenarios SET name = ?, persona = ?, goal = ?, success_criteria = ?, max_turns = ?, variables = ?, updated_at = ?
				 WHERE project_id = ? AND id = ?`,
				s.Name, s.Persona, s.Goal, s.SuccessCriteria, s.MaxTurns, variablesJSON(s.Variables), db.now(), s.ProjectID, s.ID)
			return err
		})
		return err
	})
	if isUniqueViolation(err) {
		return s, agentline.Errorf(agentline.EConflict, "the agent already has a scenario named %q", s.Name)
	}
	return after, err
}

// scenarioOn reads a scenario of the project in a transaction's conn.
func scenarioOn(ctx context.Context, projectID, id int64) func(conn) (agentline.TestScenario, error) {
	return func(c conn) (agentline.TestScenario, error) {
		s, err := scanScenario(c.queryRow(ctx, `SELECT `+scenarioColumns+` FROM test_scenarios WHERE project_id = ? AND id = ?`, projectID, id))
		return s, notFound(err, "test scenario")
	}
}

// DeleteTestScenario deletes a scenario of the project; the results of
// past runs keep their copy of it.
func (db *DB) DeleteTestScenario(ctx context.Context, projectID, id int64) error {
	return db.deleteOwned(ctx, agentline.KindTestScenario, projectID, id, "test scenario")
}
