package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/agentline/agentline"
)

const toolColumns = `id, project_id, agent_id, name, description, parameters, url, method, headers, timeout_ms, created_at, updated_at, type, allowed_tools, sealed_headers`

func scanTool(row interface{ Scan(...any) error }) (agentline.WebhookTool, error) {
	var t agentline.WebhookTool
	var params, headers, allowed string
	err := row.Scan(&t.ID, &t.ProjectID, &t.AgentID, &t.Name, &t.Description, &params, &t.URL, &t.Method,
		&headers, &t.TimeoutMS, utc(&t.CreatedAt), utc(&t.UpdatedAt), &t.Type, &allowed, &t.SealedHeaders)
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal([]byte(allowed), &t.AllowedTools); err != nil {
		return t, fmt.Errorf("tool %d allowed_tools: %w", t.ID, err)
	}
	t.Parameters = json.RawMessage(params)
	if err := json.Unmarshal([]byte(headers), &t.Headers); err != nil {
		return t, fmt.Errorf("tool %d headers: %w", t.ID, err)
	}
	return t, nil
}

// toolJSON renders the JSON columns of t. An MCP tool's headers live only
// in sealed_headers: its clear headers column stays empty.
func toolJSON(t agentline.WebhookTool) (headers, allowed string, err error) {
	h := t.Headers
	if h == nil || t.Type == agentline.ToolMCP {
		h = map[string]string{}
	}
	a := t.AllowedTools
	if a == nil {
		a = []string{}
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return "", "", err
	}
	ab, err := json.Marshal(a)
	return string(hb), string(ab), err
}

func toolType(t agentline.WebhookTool) string {
	if t.Type == "" {
		return agentline.ToolWebhook
	}
	return t.Type
}

// CreateTool stores a new webhook tool for t.AgentID, which must be an agent
// of t.ProjectID (otherwise not found). A name the agent already uses is a
// conflict.
func (db *DB) CreateTool(ctx context.Context, t agentline.WebhookTool) (agentline.WebhookTool, error) {
	headers, allowed, err := toolJSON(t)
	if err != nil {
		return t, err
	}
	t.Type = toolType(t)
	t.CreatedAt, t.UpdatedAt = db.now(), db.now()
	// INSERT ... SELECT from agents: the row is written only when the agent
	// belongs to the project.
	err = db.tx(ctx, func(c conn) error {
		if err := c.queryRow(ctx,
			`INSERT INTO agent_tools (project_id, agent_id, name, description, parameters, url, method, headers, timeout_ms, created_at, updated_at,
			type, allowed_tools, sealed_headers)
		 SELECT project_id, id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM agents WHERE project_id = ? AND id = ?
		 RETURNING id`,
			t.Name, t.Description, string(t.Parameters), t.URL, t.Method, headers, t.TimeoutMS, t.CreatedAt, t.UpdatedAt,
			t.Type, allowed, t.SealedHeaders, t.ProjectID, t.AgentID).Scan(&t.ID); err != nil {
			return err
		}
		return c.audit(ctx, change(t.ProjectID, "tool.create", "tool", t.ID, toolChanges(agentline.WebhookTool{}, t, true)))
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return t, agentline.NotFound("agent")
	case isUniqueViolation(err):
		return t, agentline.Errorf(agentline.EConflict, "the agent already has a tool named %q", t.Name)
	case err != nil:
		return t, fmt.Errorf("create tool: %w", err)
	}
	return t, nil
}

// Tools lists the webhook tools of an agent of the project, oldest first.
func (db *DB) Tools(ctx context.Context, projectID, agentID int64) ([]agentline.WebhookTool, error) {
	return queryAll(ctx, db.reader(), scanTool,
		`SELECT `+toolColumns+` FROM agent_tools WHERE project_id = ? AND agent_id = ? ORDER BY id`, projectID, agentID)
}

// Tool returns one webhook tool of the project.
func (db *DB) Tool(ctx context.Context, projectID, toolID int64) (agentline.WebhookTool, error) {
	t, err := scanTool(db.reader().queryRow(ctx,
		`SELECT `+toolColumns+` FROM agent_tools WHERE project_id = ? AND id = ?`, projectID, toolID))
	return t, notFound(err, "tool")
}

// ToolByName returns the agent's webhook tool called name; the agent must be
// of the project.
func (db *DB) ToolByName(ctx context.Context, projectID, agentID int64, name string) (agentline.WebhookTool, error) {
	t, err := scanTool(db.reader().queryRow(ctx,
		`SELECT `+toolColumns+` FROM agent_tools WHERE project_id = ? AND agent_id = ? AND name = ?`, projectID, agentID, name))
	return t, notFound(err, "tool")
}

// UpdateTool saves every editable field of t, scoped to t.ProjectID.
func (db *DB) UpdateTool(ctx context.Context, t agentline.WebhookTool) (agentline.WebhookTool, error) {
	headers, allowed, err := toolJSON(t)
	if err != nil {
		return t, err
	}
	read := func(c conn) (agentline.WebhookTool, error) {
		t, err := scanTool(c.queryRow(ctx, `SELECT `+toolColumns+` FROM agent_tools WHERE project_id = ? AND id = ?`, t.ProjectID, t.ID))
		return t, notFound(err, "tool")
	}
	var after agentline.WebhookTool
	err = db.tx(ctx, func(c conn) error {
		before, err := read(c)
		if err != nil {
			return err
		}
		_, err = c.exec(ctx,
			`UPDATE agent_tools SET name = ?, description = ?, parameters = ?, url = ?, method = ?, headers = ?, timeout_ms = ?, updated_at = ?,
				allowed_tools = ?, sealed_headers = ?
			 WHERE project_id = ? AND id = ?`,
			t.Name, t.Description, string(t.Parameters), t.URL, t.Method, headers, t.TimeoutMS, db.now(),
			allowed, t.SealedHeaders, t.ProjectID, t.ID)
		if isUniqueViolation(err) {
			return agentline.Errorf(agentline.EConflict, "the agent already has a tool named %q", t.Name)
		}
		if err != nil {
			return err
		}
		if after, err = read(c); err != nil {
			return err
		}
		return c.audit(ctx, change(t.ProjectID, "tool.update", "tool", t.ID, toolChanges(before, after, false)))
	})
	return after, err
}

// toolChanges is the audit log's changes of a tool: its public fields,
// and its headers (tokens, often) masked when they changed.
func toolChanges(before, after agentline.WebhookTool, created bool) map[string][2]any {
	var changes map[string][2]any
	if created {
		changes = agentline.AuditChanges(nil, after)
	} else {
		changes = agentline.AuditChanges(before, after)
	}
	had := len(before.Headers) > 0 || before.SealedHeaders != ""
	has := len(after.Headers) > 0 || after.SealedHeaders != ""
	if (had || has) && (!reflect.DeepEqual(before.Headers, after.Headers) || before.SealedHeaders != after.SealedHeaders) {
		if changes == nil {
			changes = map[string][2]any{}
		}
		changes["headers"] = agentline.MaskedChange(had, has)
	}
	return changes
}

// DeleteTool deletes a webhook tool of the project.
func (db *DB) DeleteTool(ctx context.Context, projectID, toolID int64) error {
	return db.deleteOwned(ctx, agentline.KindTool, projectID, toolID, "tool")
}
