package store

// Agent versions: the agents row holds the latest settings (what the
// editor reads and writes) and the numbers of its latest and published
// versions; agent_versions keeps every version's settings as JSON, never
// changed once written. Whatever runs a conversation reads PublishedAgent
// (or AgentAtVersion for a test), never the row's settings directly.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentline/agentline"
)

// saveVersion makes a's settings, with the tools and knowledge documents
// the agent has now, a new version when they differ from its latest, and
// publishes the latest when publish is set. It runs in the transaction
// that saved a.
func (db *DB) saveVersion(ctx context.Context, c conn, a agentline.Agent, publish bool) error {
	s := a.Settings()
	var err error
	if s.Tools, err = queryAll(ctx, c, scanVersionTool,
		`SELECT id, name, updated_at FROM agent_tools WHERE agent_id = ? ORDER BY id`, a.ID); err != nil {
		return fmt.Errorf("version tools: %w", err)
	}
	if s.Knowledge, err = queryAll(ctx, c, scanVersionDocument,
		`SELECT id, title FROM knowledge_documents WHERE agent_id = ? ORDER BY id`, a.ID); err != nil {
		return fmt.Errorf("version knowledge: %w", err)
	}
	var latest, published int
	if err := c.queryRow(ctx, `SELECT version, published_version FROM agents WHERE id = ?`, a.ID).Scan(&latest, &published); err != nil {
		return notFound(err, "agent")
	}
	if latest > 0 {
		prev, err := versionOn(ctx, c, a.ProjectID, a.ID, latest)
		if err != nil {
			return err
		}
		if prev.Settings.Equal(s) {
			if publish && published != latest {
				_, err = c.exec(ctx, `UPDATE agents SET published_version = version WHERE id = ?`, a.ID)
			}
			return err
		}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	n := latest + 1
	if _, err := c.exec(ctx, `INSERT INTO agent_versions (agent_id, project_id, version, settings, created_at) VALUES (?, ?, ?, ?, ?)`,
		a.ID, a.ProjectID, n, string(raw), db.now()); err != nil {
		return fmt.Errorf("insert agent version: %w", err)
	}
	if publish || published == 0 {
		// The first version is published whatever the agent's review
		// setting: there is no other one to run.
		published = n
	}
	_, err = c.exec(ctx, `UPDATE agents SET version = ?, published_version = ? WHERE id = ?`, n, published, a.ID)
	return err
}

// nullVersion stores version 0 (no version: an agent not saved since
// versions began) as NULL, which conversations answer as null.
func nullVersion(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func scanVersionTool(row interface{ Scan(...any) error }) (agentline.VersionTool, error) {
	var t agentline.VersionTool
	return t, row.Scan(&t.ID, &t.Name, utc(&t.UpdatedAt))
}

func scanVersionDocument(row interface{ Scan(...any) error }) (agentline.VersionDocument, error) {
	var d agentline.VersionDocument
	return d, row.Scan(&d.ID, &d.Title)
}

const versionColumns = `v.agent_id, v.version, v.settings, v.created_at, a.published_version`

func scanVersion(row interface{ Scan(...any) error }) (agentline.AgentVersion, error) {
	var v agentline.AgentVersion
	var raw string
	var published int
	if err := row.Scan(&v.AgentID, &v.Version, &raw, utc(&v.CreatedAt), &published); err != nil {
		return v, err
	}
	v.Published = published == v.Version
	if err := json.Unmarshal([]byte(raw), &v.Settings); err != nil {
		return v, fmt.Errorf("agent %d version %d: %w", v.AgentID, v.Version, err)
	}
	return v, nil
}

// AgentVersions lists an agent's versions newest first, limit of them,
// those below version before when before is not 0.
func (db *DB) AgentVersions(ctx context.Context, projectID, agentID int64, before, limit int) ([]agentline.AgentVersion, error) {
	return queryAll(ctx, db.reader(), scanVersion, `SELECT `+versionColumns+`
		FROM agent_versions v JOIN agents a ON a.id = v.agent_id
		WHERE v.project_id = ? AND v.agent_id = ? AND (? = 0 OR v.version < ?)
		ORDER BY v.version DESC LIMIT ?`, projectID, agentID, before, before, limit)
}

// AgentVersion returns version n of an agent of the project.
func (db *DB) AgentVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.AgentVersion, error) {
	return versionOn(ctx, db.reader(), projectID, agentID, n)
}

func versionOn(ctx context.Context, c conn, projectID, agentID int64, n int) (agentline.AgentVersion, error) {
	v, err := scanVersion(c.queryRow(ctx, `SELECT `+versionColumns+`
		FROM agent_versions v JOIN agents a ON a.id = v.agent_id
		WHERE v.project_id = ? AND v.agent_id = ? AND v.version = ?`, projectID, agentID, n))
	return v, notFound(err, "agent version")
}

// PublishAgentVersion makes version n the one the agent's conversations
// run; publishing an older version is a rollback. The agent's latest
// settings (the editor's draft) stay as they are.
func (db *DB) PublishAgentVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.Agent, error) {
	var a agentline.Agent
	err := db.tx(ctx, func(c conn) error {
		read := func(c conn) (agentline.Agent, error) { return agentOn(ctx, c, projectID, agentID) }
		var err error
		a, err = updateAudited(ctx, c, projectID, "agent.publish", "agent", agentID, read, func(c conn) error {
			res, err := c.exec(ctx, `UPDATE agents SET published_version = ?
				WHERE project_id = ? AND id = ? AND EXISTS (SELECT 1 FROM agent_versions v WHERE v.agent_id = agents.id AND v.version = ?)`,
				n, projectID, agentID, n)
			return mustAffect(res, err, "agent version")
		})
		return err
	})
	return a, err
}

// PublishedAgent returns an agent of the project with the settings of its
// published version: what every channel, number and campaign runs. An
// agent not saved since versions began runs its row as it is (Running 0).
func (db *DB) PublishedAgent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error) {
	a, err := db.Agent(ctx, projectID, agentID)
	if err != nil {
		return a, err
	}
	return db.atVersion(ctx, a, a.PublishedVersion)
}

// AgentAtVersion returns an agent of the project with the settings of
// version n, published or not (a test of a draft); n 0 is the latest.
func (db *DB) AgentAtVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.Agent, error) {
	a, err := db.Agent(ctx, projectID, agentID)
	if err != nil {
		return a, err
	}
	if n == 0 {
		n = a.Version
	}
	return db.atVersion(ctx, a, n)
}

func (db *DB) atVersion(ctx context.Context, a agentline.Agent, n int) (agentline.Agent, error) {
	return atVersionOn(ctx, db.reader(), a, n)
}

// atVersionOn is atVersion on c.
func atVersionOn(ctx context.Context, c conn, a agentline.Agent, n int) (agentline.Agent, error) {
	a.Running = n
	if n == a.Version {
		return a, nil
	}
	v, err := versionOn(ctx, c, a.ProjectID, a.ID, n)
	if err != nil {
		return a, err
	}
	return a.WithSettings(v.Settings), nil
}
