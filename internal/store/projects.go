package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentline/agentline"
)

// CreateProject stores a project and makes ownerID its owner.
func (db *DB) CreateProject(ctx context.Context, p agentline.Project, ownerID int64) (agentline.Project, error) {
	p.CreatedAt, p.UpdatedAt = db.now(), db.now()
	branding, err := json.Marshal(p.Branding)
	if err != nil {
		return p, err
	}
	err = db.tx(ctx, func(c conn) error {
		if err := c.queryRow(ctx,
			`INSERT INTO projects (name, branding, created_at, updated_at) VALUES (?, ?, ?, ?) RETURNING id`,
			p.Name, string(branding), p.CreatedAt, p.UpdatedAt).Scan(&p.ID); err != nil {
			return err
		}
		_, err := c.exec(ctx,
			`INSERT INTO project_members (project_id, user_id, role, created_at) VALUES (?, ?, ?, ?)`,
			p.ID, ownerID, agentline.RoleOwner, p.CreatedAt)
		if err != nil {
			return err
		}
		return c.audit(ctx, change(p.ID, "project.create", "project", p.ID, agentline.AuditChanges(nil, p)))
	})
	if err != nil {
		return p, fmt.Errorf("create project: %w", err)
	}
	p.Role = agentline.RoleOwner
	return p, nil
}

const projectColumns = `p.id, p.name, p.branding, p.recording_retention_days, p.created_at, p.updated_at`

func scanProject(row interface{ Scan(...any) error }, extra ...any) (agentline.Project, error) {
	var p agentline.Project
	var branding string
	if err := row.Scan(append([]any{&p.ID, &p.Name, &branding, &p.RecordingRetentionDays, utc(&p.CreatedAt), utc(&p.UpdatedAt)}, extra...)...); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(branding), &p.Branding); err != nil {
		return p, fmt.Errorf("project %d branding: %w", p.ID, err)
	}
	return p, nil
}

// ProjectsForUser lists the projects the user is a member of, with the role.
func (db *DB) ProjectsForUser(ctx context.Context, userID int64) ([]agentline.Project, error) {
	rows, err := db.reader().query(ctx,
		`SELECT `+projectColumns+`, m.role FROM projects p JOIN project_members m ON m.project_id = p.id
		 WHERE m.user_id = ? ORDER BY p.id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []agentline.Project{}
	for rows.Next() {
		var role agentline.Role
		p, err := scanProject(rows, &role)
		if err != nil {
			return nil, err
		}
		p.Role = role
		out = append(out, p)
	}
	return out, rows.Err()
}

// Project returns one project.
func (db *DB) Project(ctx context.Context, projectID int64) (agentline.Project, error) {
	p, err := scanProject(db.reader().queryRow(ctx, `SELECT `+projectColumns+` FROM projects p WHERE p.id = ?`, projectID))
	return p, notFound(err, "project")
}

// UpdateProject saves a project's name, branding and retention.
func (db *DB) UpdateProject(ctx context.Context, p agentline.Project) (agentline.Project, error) {
	branding, err := json.Marshal(p.Branding)
	if err != nil {
		return p, err
	}
	p.UpdatedAt = db.now()
	var after agentline.Project
	err = db.tx(ctx, func(c conn) error {
		before, err := scanProject(c.queryRow(ctx, `SELECT `+projectColumns+` FROM projects p WHERE p.id = ?`, p.ID))
		if err != nil {
			return notFound(err, "project")
		}
		if _, err := c.exec(ctx, `UPDATE projects SET name = ?, branding = ?, recording_retention_days = ?, updated_at = ? WHERE id = ?`,
			p.Name, string(branding), p.RecordingRetentionDays, p.UpdatedAt, p.ID); err != nil {
			return err
		}
		if after, err = scanProject(c.queryRow(ctx, `SELECT `+projectColumns+` FROM projects p WHERE p.id = ?`, p.ID)); err != nil {
			return err
		}
		return c.audit(ctx, change(p.ID, "project.update", "project", p.ID, agentline.AuditChanges(before, after)))
	})
	return after, err
}

// DeleteProject deletes a project and everything in it. The objects of its
// call recordings live outside the database: a project that has any gets,
// in the same transaction, the job that deletes them.
func (db *DB) DeleteProject(ctx context.Context, projectID int64) error {
	defer db.webhooksChanged()
	return db.tx(ctx, func(c conn) error {
		var recorded bool
		var name string
		if err := c.queryRow(ctx, `SELECT name, EXISTS (SELECT 1 FROM recordings WHERE project_id = ?) FROM projects WHERE id = ?`,
			projectID, projectID).Scan(&name, &recorded); err != nil {
			return notFound(err, "project")
		}
		if _, err := c.exec(ctx, `DELETE FROM projects WHERE id = ?`, projectID); err != nil {
			return err
		}
		// The instance's entry: with the project gone, its owners can no
		// longer read its log, its administrators still can this.
		if err := c.audit(ctx, change(0, "project.delete", "project", projectID, map[string][2]any{"name": {name, nil}})); err != nil || !recorded {
			return err
		}
		return db.outboxOn(c).Enqueue(ctx, agentline.PurgeProjectRecordings{ProjectID: projectID})
	})
}

// MemberRole returns the user's role in the project, or not found when the
// user is no member (so that callers answer 404, not 403).
func (db *DB) MemberRole(ctx context.Context, projectID, userID int64) (agentline.Role, error) {
	var r agentline.Role
	err := db.reader().queryRow(ctx,
		`SELECT role FROM project_members WHERE project_id = ? AND user_id = ?`, projectID, userID).Scan(&r)
	return r, notFound(err, "project")
}

// Members lists the members of a project.
func (db *DB) Members(ctx context.Context, projectID int64) ([]agentline.Member, error) {
	rows, err := db.reader().query(ctx,
		`SELECT m.project_id, m.user_id, u.email, m.role, m.created_at FROM project_members m
		 JOIN users u ON u.id = m.user_id WHERE m.project_id = ? ORDER BY m.created_at, m.user_id`, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []agentline.Member{}
	for rows.Next() {
		var m agentline.Member
		if err := rows.Scan(&m.ProjectID, &m.UserID, &m.Email, &m.Role, utc(&m.CreatedAt)); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// SetMemberRole changes the role of a member of the project. People join
// only by accepting an invitation (AcceptInvite); this never adds anyone.
// Demoting the last owner is a conflict.
func (db *DB) SetMemberRole(ctx context.Context, projectID, userID int64, role agentline.Role) (agentline.Member, error) {
	m := agentline.Member{ProjectID: projectID, UserID: userID, Role: role}
	err := db.tx(ctx, func(c conn) error {
		var old agentline.Role
		err := c.queryRow(ctx, `SELECT m.role, m.created_at, u.email FROM project_members m JOIN users u ON u.id = m.user_id
			WHERE m.project_id = ? AND m.user_id = ?`, projectID, userID).Scan(&old, utc(&m.CreatedAt), &m.Email)
		if err != nil {
			return notFound(err, "member")
		}
		if old == agentline.RoleOwner && role != agentline.RoleOwner {
			if err := lastOwnerCheck(ctx, c, projectID); err != nil {
				return err
			}
		}
		if _, err = c.exec(ctx, `UPDATE project_members SET role = ? WHERE project_id = ? AND user_id = ?`, role, projectID, userID); err != nil {
			return err
		}
		return c.audit(ctx, change(projectID, "member.role_change", "member", userID,
			map[string][2]any{"role": {old, role}}))
	})
	return m, err
}

// SetMember adds the user with this email to the project with the role, or
// changes their role, and reports whether the member is new. It is for
// tests and tooling: no route calls it, since people join a project only
// by accepting an invitation. Demoting the last owner is a conflict.
func (db *DB) SetMember(ctx context.Context, projectID int64, email string, role agentline.Role) (agentline.Member, bool, error) {
	m := agentline.Member{ProjectID: projectID, Role: role}
	var created bool
	err := db.tx(ctx, func(c conn) error {
		err := c.queryRow(ctx, `SELECT id, email FROM users WHERE email = ?`, NormalizeEmail(email)).Scan(&m.UserID, &m.Email)
		if err != nil {
			if e := notFound(err, "user"); e != err {
				return agentline.Invalid("email", "no user has the email %s; create the account first", NormalizeEmail(email))
			}
			return err
		}
		var old agentline.Role
		err = c.queryRow(ctx, `SELECT role, created_at FROM project_members WHERE project_id = ? AND user_id = ?`,
			projectID, m.UserID).Scan(&old, utc(&m.CreatedAt))
		if e := notFound(err, "member"); e != err {
			created = true
			m.CreatedAt = db.now()
			_, err = c.exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES (?, ?, ?, ?)`,
				projectID, m.UserID, role, m.CreatedAt)
			return err
		} else if err != nil {
			return err
		}
		if old == agentline.RoleOwner && role != agentline.RoleOwner {
			if err := lastOwnerCheck(ctx, c, projectID); err != nil {
				return err
			}
		}
		_, err = c.exec(ctx, `UPDATE project_members SET role = ? WHERE project_id = ? AND user_id = ?`, role, projectID, m.UserID)
		return err
	})
	return m, created, err
}

// RemoveMember takes a user out of a project; the last owner stays.
func (db *DB) RemoveMember(ctx context.Context, projectID, userID int64) error {
	return db.tx(ctx, func(c conn) error {
		var role agentline.Role
		err := c.queryRow(ctx, `SELECT role FROM project_members WHERE project_id = ? AND user_id = ?`, projectID, userID).Scan(&role)
		if err != nil {
			return notFound(err, "member")
		}
		if role == agentline.RoleOwner {
			if err := lastOwnerCheck(ctx, c, projectID); err != nil {
				return err
			}
		}
		if _, err = c.exec(ctx, `DELETE FROM project_members WHERE project_id = ? AND user_id = ?`, projectID, userID); err != nil {
			return err
		}
		return c.audit(ctx, change(projectID, "member.remove", "member", userID, map[string][2]any{"role": {role, nil}}))
	})
}

func lastOwnerCheck(ctx context.Context, c conn, projectID int64) error {
	var owners int
	if err := c.queryRow(ctx, `SELECT count(*) FROM project_members WHERE project_id = ? AND role = ?`,
		projectID, agentline.RoleOwner).Scan(&owners); err != nil {
		return err
	}
	if owners <= 1 {
		return agentline.Errorf(agentline.EConflict, "the last owner of a project cannot be removed or demoted; make another member owner first")
	}
	return nil
}

// ProjectOf returns the id of the project that owns the object id of
// kind. It lets handlers addressed by an object's own id authorize the
// caller before loading the object scoped to that project.
func (db *DB) ProjectOf(ctx context.Context, kind agentline.Kind, id int64) (int64, error) {
	table, ok := kindTables[kind]
	if !ok {
		return 0, fmt.Errorf("ProjectOf: unknown kind %q", kind)
	}
	var projectID int64
	err := db.reader().queryRow(ctx, `SELECT project_id FROM `+table+` WHERE id = ?`, id).Scan(&projectID)
	return projectID, notFound(err, kind.Noun())
}

// deleteOwned deletes the object id of the kind in the project; what names
// it in the not-found error when the project has no such object.
func (db *DB) deleteOwned(ctx context.Context, kind agentline.Kind, projectID, id int64, what string) error {
	table, ok := kindTables[kind]
	if !ok {
		return fmt.Errorf("delete: unknown kind %q", kind)
	}
	return db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `DELETE FROM `+table+` WHERE project_id = ? AND id = ?`, projectID, id)
		if err := mustAffect(res, err, what); err != nil {
			return err
		}
		return c.audit(ctx, change(projectID, string(kind)+".delete", string(kind), id, nil))
	})
}

// kindTables maps each kind to the table of its rows (each has id and
// project_id columns). Only these constant names ever reach ProjectOf's
// SQL; an unknown kind is refused.
var kindTables = map[agentline.Kind]string{
	agentline.KindAgent:             "agents",
	agentline.KindAPIKey:            "api_keys",
	agentline.KindTool:              "agent_tools",
	agentline.KindKnowledgeDocument: "knowledge_documents",
	agentline.KindChannel:           "channels",
	agentline.KindLead:              "leads",
	agentline.KindPhoneNumber:       "phone_numbers",
	agentline.KindCall:              "calls",
	agentline.KindWebhook:           "webhook_endpoints",
	agentline.KindInvite:            "invites",
	agentline.KindCampaign:          "campaigns",
	agentline.KindTestScenario:      "test_scenarios",
	agentline.KindTestRun:           "test_runs",
}
