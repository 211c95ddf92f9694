package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentline/agentline"
)

const agentColumns = `id, project_id, name, instructions, greeting, model, provider, voice, language, transfer_number, record_calls, analysis,
	version, published_version, review_before_publish, created_at, updated_at`

// agentRow is an agent's columns as scanned, before its analysis
// settings are parsed (see callRow).
type agentRow struct {
	a        agentline.Agent
	analysis string
}

func (r *agentRow) dests() []any {
	a := &r.a
	return []any{&a.ID, &a.ProjectID, &a.Name, &a.Instructions, &a.Greeting, &a.Model, &a.Provider,
		&a.Voice, &a.Language, &a.TransferNumber, &a.RecordCalls, &r.analysis,
		&a.Version, &a.PublishedVersion, &a.ReviewBeforePublish, utc(&a.CreatedAt), utc(&a.UpdatedAt)}
}

func (r *agentRow) agent() (agentline.Agent, error) {
	a := r.a
	var err error
	if a.Analysis, err = agentline.ParseAnalysisSettings([]byte(r.analysis)); err != nil {
		return a, fmt.Errorf("agent %d analysis: %w", a.ID, err)
	}
	return a, nil
}

func scanAgent(row interface{ Scan(...any) error }) (agentline.Agent, error) {
	var r agentRow
	if err := row.Scan(r.dests()...); err != nil {
		return r.a, err
	}
	return r.agent()
}

func analysisJSON(s agentline.AnalysisSettings) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// CreateAgent stores a new agent in a.ProjectID with its first version,
// which is published whatever review_before_publish says: there is no
// other version to run.
func (db *DB) CreateAgent(ctx context.Context, a agentline.Agent) (agentline.Agent, error) {
	a.CreatedAt, a.UpdatedAt = db.now(), db.now()
	analysis, err := analysisJSON(a.Analysis)
	if err != nil {
		return a, err
	}
	err = db.tx(ctx, func(c conn) error {
		err := c.queryRow(ctx,
			`INSERT INTO agents (project_id, name, instructions, greeting, model, provider, voice, language, transfer_number, record_calls, analysis,
			   review_before_publish, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			a.ProjectID, a.Name, a.Instructions, a.Greeting, a.Model, a.Provider, a.Voice, a.Language, a.TransferNumber,
			a.RecordCalls, analysis, a.ReviewBeforePublish, a.CreatedAt, a.UpdatedAt).
			Scan(&a.ID)
		if isForeignKeyViolation(err) {
			return agentline.NotFound("project")
		}
		if err != nil {
			return fmt.Errorf("create agent: %w", err)
		}
		if err := db.saveVersion(ctx, c, a, true); err != nil {
			return err
		}
		if a, err = agentOn(ctx, c, a.ProjectID, a.ID); err != nil {
			return err
		}
		return c.audit(ctx, change(a.ProjectID, "agent.create", "agent", a.ID, agentline.AuditChanges(nil, a)))
	})
	return a, err
}

// Agents lists a project's agents.
func (db *DB) Agents(ctx context.Context, projectID int64) ([]agentline.Agent, error) {
	return queryAll(ctx, db.reader(), scanAgent, `SELECT `+agentColumns+` FROM agents WHERE project_id = ? ORDER BY id`, projectID)
}

// Agent returns one agent of the project, with its latest settings (the
// editor's draft). A conversation runs PublishedAgent instead.
func (db *DB) Agent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error) {
	return agentOn(ctx, db.reader(), projectID, agentID)
}

func agentOn(ctx context.Context, c conn, projectID, agentID int64) (agentline.Agent, error) {
	a, err := scanAgent(c.queryRow(ctx,
		`SELECT `+agentColumns+` FROM agents WHERE project_id = ? AND id = ?`, projectID, agentID))
	return a, notFound(err, "agent")
}

// UpdateAgent saves every editable field of a, scoped to a.ProjectID; a
// change of its settings makes a new version, published unless the agent
// reviews before publishing.
func (db *DB) UpdateAgent(ctx context.Context, a agentline.Agent) (agentline.Agent, error) {
	analysis, err := analysisJSON(a.Analysis)
	if err != nil {
		return a, err
	}
	err = db.tx(ctx, func(c conn) error {
		read := func(c conn) (agentline.Agent, error) { return agentOn(ctx, c, a.ProjectID, a.ID) }
		var err error
		a, err = updateAudited(ctx, c, a.ProjectID, "agent.update", "agent", a.ID, read, func(c conn) error {
			return db.updateAgentOn(ctx, c, a, analysis)
		})
		return err
	})
	return a, err
}

// updateAgentOn is UpdateAgent's write: the row, then its new version.
func (db *DB) updateAgentOn(ctx context.Context, c conn, a agentline.Agent, analysis string) error {
	res, err := c.exec(ctx,
		`UPDATE agents SET name = ?, instructions = ?, greeting = ?, model = ?, provider = ?, voice = ?, language = ?, transfer_number = ?,
		 record_calls = ?, analysis = ?, review_before_publish = ?, updated_at = ?
		 WHERE project_id = ? AND id = ?`,
		a.Name, a.Instructions, a.Greeting, a.Model, a.Provider, a.Voice, a.Language, a.TransferNumber,
		a.RecordCalls, analysis, a.ReviewBeforePublish, db.now(), a.ProjectID, a.ID)
	if err := mustAffect(res, err, "agent"); err != nil {
		return err
	}
	return db.saveVersion(ctx, c, a, !a.ReviewBeforePublish)
}

// DeleteAgent deletes an agent of the project.
func (db *DB) DeleteAgent(ctx context.Context, projectID, agentID int64) error {
	return db.deleteOwned(ctx, agentline.KindAgent, projectID, agentID, "agent")
}
