package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentline/agentline"
)

const agentColumns = `id, project_id, name, instructions, greeting, model, provider, voice, language, transfer_number, record_calls, analysis, created_at, updated_at`

func scanAgent(row interface{ Scan(...any) error }) (agentline.Agent, error) {
	var a agentline.Agent
	var analysis string
	err := row.Scan(&a.ID, &a.ProjectID, &a.Name, &a.Instructions, &a.Greeting, &a.Model, &a.Provider,
		&a.Voice, &a.Language, &a.TransferNumber, &a.RecordCalls, &analysis, utc(&a.CreatedAt), utc(&a.UpdatedAt))
	if err != nil {
		return a, err
	}
	if a.Analysis, err = agentline.ParseAnalysisSettings([]byte(analysis)); err != nil {
		return a, fmt.Errorf("agent %d analysis: %w", a.ID, err)
	}
	return a, nil
}

func analysisJSON(s agentline.AnalysisSettings) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// CreateAgent stores a new agent in a.ProjectID.
func (db *DB) CreateAgent(ctx context.Context, a agentline.Agent) (agentline.Agent, error) {
	a.CreatedAt, a.UpdatedAt = db.now(), db.now()
	analysis, err := analysisJSON(a.Analysis)
	if err != nil {
		return a, err
	}
	err = db.writer().queryRow(ctx,
		`INSERT INTO agents (project_id, name, instructions, greeting, model, provider, voice, language, transfer_number, record_calls, analysis, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		a.ProjectID, a.Name, a.Instructions, a.Greeting, a.Model, a.Provider, a.Voice, a.Language, a.TransferNumber,
		a.RecordCalls, analysis, a.CreatedAt, a.UpdatedAt).
		Scan(&a.ID)
	if isForeignKeyViolation(err) {
		return a, agentline.NotFound("project")
	}
	if err != nil {
		return a, fmt.Errorf("create agent: %w", err)
	}
	return a, nil
}

// Agents lists a project's agents.
func (db *DB) Agents(ctx context.Context, projectID int64) ([]agentline.Agent, error) {
	return queryAll(ctx, db.reader(), scanAgent, `SELECT `+agentColumns+` FROM agents WHERE project_id = ? ORDER BY id`, projectID)
}

// Agent returns one agent of the project.
func (db *DB) Agent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error) {
	a, err := scanAgent(db.reader().queryRow(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE project_id = ? AND id = ?`, projectID, agentID))
	return a, notFound(err, "agent")
}

// UpdateAgent saves every editable field of a, scoped to a.ProjectID.
func (db *DB) UpdateAgent(ctx context.Context, a agentline.Agent) (agentline.Agent, error) {
	analysis, err := analysisJSON(a.Analysis)
	if err != nil {
		return a, err
	}
	res, err := db.writer().exec(ctx,
		`UPDATE agents SET name = ?, instructions = ?, greeting = ?, model = ?, provider = ?, voice = ?, language = ?, transfer_number = ?,
		 record_calls = ?, analysis = ?, updated_at = ?
		 WHERE project_id = ? AND id = ?`,
		a.Name, a.Instructions, a.Greeting, a.Model, a.Provider, a.Voice, a.Language, a.TransferNumber,
		a.RecordCalls, analysis, db.now(), a.ProjectID, a.ID)
	if err := mustAffect(res, err, "agent"); err != nil {
		return a, err
	}
	return db.Agent(ctx, a.ProjectID, a.ID)
}

// DeleteAgent deletes an agent of the project.
func (db *DB) DeleteAgent(ctx context.Context, projectID, agentID int64) error {
	return db.deleteOwned(ctx, agentline.KindAgent, projectID, agentID, "agent")
}
