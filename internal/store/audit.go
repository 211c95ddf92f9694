package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// audited is an audit entry's change, before the request's origin is
// added: what was done to which resource of which project (0: none).
type audited struct {
	project  int64
	action   string
	kind, id string
	changes  map[string][2]any
}

// change is an audited change of a project's resource with an integer id.
func change(projectID int64, action, kind string, id int64, changes map[string][2]any) audited {
	return audited{project: projectID, action: action, kind: kind, id: strconv.FormatInt(id, 10), changes: changes}
}

// audit appends the entry of a change to the log in c, the change's own
// transaction: the entry and the change commit or roll back together.
// Who acted, and from where, is the origin on ctx (none: agentline).
func (c conn) audit(ctx context.Context, a audited) error {
	return c.auditAs(ctx, agentline.AuditOriginFrom(ctx), a)
}

// auditAs is audit for a change whose actor is not the request's
// signed-in caller: a person accepting an invitation, signing in.
func (c conn) auditAs(ctx context.Context, o agentline.AuditOrigin, a audited) error {
	return c.appendAudit(ctx, agentline.AuditEntry{At: c.db.now(), Actor: o.Actor, Action: a.action,
		Resource: agentline.AuditResource{Kind: a.kind, ID: a.id}, ProjectID: a.project, Changes: a.changes,
		ClientIP: o.ClientIP, RequestID: o.RequestID})
}

// auditRequest is audit for a change that agentline also makes on its
// own (a campaign's dial, the carrier's report that ends a call): logged
// only when a person or a key asked for it.
func (c conn) auditRequest(ctx context.Context, a audited) error {
	if agentline.AuditOriginFrom(ctx).Actor.Kind == agentline.ActorSystem {
		return nil
	}
	return c.audit(ctx, a)
}

// asUser is ctx's origin with the person userID (email) as its actor.
func asUser(ctx context.Context, userID int64, email string) agentline.AuditOrigin {
	o := agentline.AuditOriginFrom(ctx)
	o.Actor = agentline.Actor{Kind: agentline.ActorUser, ID: userID, Email: email}
	return o
}

func (c conn) appendAudit(ctx context.Context, e agentline.AuditEntry) error {
	var changes string
	if len(e.Changes) > 0 {
		raw, err := json.Marshal(e.Changes)
		if err != nil {
			return fmt.Errorf("audit %s: %w", e.Action, err)
		}
		changes = string(raw)
	}
	var project any
	if e.ProjectID > 0 {
		project = e.ProjectID
	}
	label := e.Actor.Email
	if e.Actor.Kind == agentline.ActorAPIKey {
		label = e.Actor.KeyPrefix
	}
	if e.Actor.Kind == "" {
		e.Actor.Kind = agentline.ActorSystem
	}
	_, err := c.exec(ctx, `INSERT INTO audit_log (at, project_id, actor_kind, actor_id, actor_label, action,
		resource_kind, resource_id, changes, client_ip, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.At.UTC(), project, e.Actor.Kind, e.Actor.ID, label, e.Action, e.Resource.Kind, e.Resource.ID,
		changes, e.ClientIP, e.RequestID)
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// AppendAudit writes an entry that records no change of the store's (a
// sign-in, a refused sign-in, an MCP tool call) in a statement of its own.
// A zero At is now; an entry without an actor takes the origin on ctx.
func (db *DB) AppendAudit(ctx context.Context, e agentline.AuditEntry) error {
	if e.At.IsZero() {
		e.At = db.now()
	}
	if e.Actor.Kind == "" {
		o := agentline.AuditOriginFrom(ctx)
		e.Actor = o.Actor
		if e.ClientIP == "" {
			e.ClientIP = o.ClientIP
		}
		if e.RequestID == "" {
			e.RequestID = o.RequestID
		}
	}
	return db.writer().appendAudit(ctx, e)
}

// AuditLog lists the entries f picks, newest first, at most f.Limit.
func (db *DB) AuditLog(ctx context.Context, f agentline.AuditFilter) ([]agentline.AuditEntry, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.ProjectID > 0 {
		add("project_id = ?", f.ProjectID)
	} else {
		where = append(where, "project_id IS NULL")
	}
	if f.ActorKind != "" {
		add("actor_kind = ?", f.ActorKind)
	}
	if f.ActorID > 0 {
		add("actor_id = ?", f.ActorID)
	}
	if f.ActorLabel != "" {
		add("lower(actor_label) = lower(?)", f.ActorLabel)
	}
	if f.Action != "" {
		add("action = ?", f.Action)
	}
	if f.ResourceKind != "" {
		add("resource_kind = ?", f.ResourceKind)
	}
	if f.ResourceID != "" {
		add("resource_id = ?", f.ResourceID)
	}
	if !f.From.IsZero() {
		add("at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		add("at < ?", f.To.UTC())
	}
	if f.Before > 0 {
		add("id < ?", f.Before)
	}
	q := `SELECT id, at, coalesce(project_id, 0), actor_kind, actor_id, actor_label, action, resource_kind, resource_id,
		changes, client_ip, request_id FROM audit_log WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(f.Limit)
	}
	return queryAll(ctx, db.reader(), scanAudit, q, args...)
}

func scanAudit(r interface{ Scan(...any) error }) (agentline.AuditEntry, error) {
	var e agentline.AuditEntry
	var label, changes string
	err := r.Scan(&e.ID, utc(&e.At), &e.ProjectID, &e.Actor.Kind, &e.Actor.ID, &label, &e.Action,
		&e.Resource.Kind, &e.Resource.ID, &changes, &e.ClientIP, &e.RequestID)
	if err != nil {
		return e, err
	}
	switch e.Actor.Kind {
	case agentline.ActorAPIKey:
		e.Actor.KeyPrefix = label
	case agentline.ActorUser:
		e.Actor.Email = label
	}
	if changes != "" {
		if err := json.Unmarshal([]byte(changes), &e.Changes); err != nil {
			return e, fmt.Errorf("audit entry %d changes: %w", e.ID, err)
		}
	}
	return e, nil
}

// PruneAuditLog deletes the entries written before cutoff, the retention
// setting's only way out of the log, and says how many went.
func (db *DB) PruneAuditLog(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := db.writer().exec(ctx, `DELETE FROM audit_log WHERE at < ?`, cutoff.UTC())
	if err != nil {
		return 0, fmt.Errorf("prune audit log: %w", err)
	}
	return res.RowsAffected()
}

// updateAudited runs update in c's transaction between two reads of the
// row it changes and logs the difference as action on the resource: the
// before is read in the same transaction, so it is what the change
// replaced. It returns the row as it is after.
func updateAudited[T any](ctx context.Context, c conn, projectID int64, action, kind string, id int64,
	read func(conn) (T, error), update func(conn) error) (T, error) {
	before, err := read(c)
	if err != nil {
		return before, err
	}
	if err := update(c); err != nil {
		return before, err
	}
	after, err := read(c)
	if err != nil {
		return after, err
	}
	return after, c.audit(ctx, change(projectID, action, kind, id, agentline.AuditChanges(before, after)))
}
