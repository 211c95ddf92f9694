package store

import (
	"context"
	"fmt"

	"github.com/agentline/agentline"
)

const inviteColumns = `i.id, i.project_id, i.kind, i.email, i.role, i.created_at, i.expires_at`

func scanInvite(row interface{ Scan(...any) error }) (agentline.Invite, error) {
	var i agentline.Invite
	err := row.Scan(&i.ID, &i.ProjectID, &i.Kind, &i.Email, &i.Role, utc(&i.CreatedAt), utc(&i.ExpiresAt))
	return i, err
}

// liveInvites is the FROM clause of invitations that can still be
// accepted: unused, unexpired, and made by someone who still may invite
// (an enabled owner of the project). An invitation dies with its inviter's
// right to invite, without anyone having to remember to withdraw it.
const liveInvites = ` FROM invites i
	JOIN projects p ON p.id = i.project_id
	JOIN users inviter ON inviter.id = i.created_by AND inviter.disabled_at IS NULL
	JOIN project_members m ON m.project_id = i.project_id AND m.user_id = i.created_by AND m.role = 'owner'
	WHERE i.kind = 'invite' AND i.used_at IS NULL AND i.expires_at > ?`

// CreateInvite stores an invitation under the hash of its token. With
// mail, the job that emails it is queued in the same transaction, so a
// restart loses no invitation email.
func (db *DB) CreateInvite(ctx context.Context, i agentline.Invite, tokenHash string, createdBy int64, mail bool) (agentline.Invite, error) {
	i.Email, i.CreatedAt = NormalizeEmail(i.Email), db.now()
	err := db.tx(ctx, func(c conn) error {
		err := c.queryRow(ctx,
			`INSERT INTO invites (project_id, kind, email, role, token_hash, created_by, created_at, expires_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			i.ProjectID, i.Kind, i.Email, i.Role, tokenHash, createdBy, i.CreatedAt, i.ExpiresAt.UTC()).Scan(&i.ID)
		if err != nil {
			return err
		}
		if err := c.audit(ctx, change(i.ProjectID, "invite.create", "invite", i.ID,
			map[string][2]any{"email": {nil, i.Email}, "role": {nil, i.Role}, "kind": {nil, i.Kind}})); err != nil || !mail {
			return err
		}
		return db.outboxOn(c).Enqueue(ctx, agentline.SendInvitation{InviteID: i.ID})
	})
	if err != nil {
		return i, fmt.Errorf("create invite: %w", err)
	}
	return i, nil
}

// Invites lists a project's invitations that can still be accepted.
func (db *DB) Invites(ctx context.Context, projectID int64) ([]agentline.Invite, error) {
	return queryAll(ctx, db.reader(), scanInvite,
		`SELECT `+inviteColumns+liveInvites+` AND i.project_id = ? ORDER BY i.id`, db.now(), projectID)
}

// DeleteInvite withdraws an invitation of the project.
func (db *DB) DeleteInvite(ctx context.Context, projectID, inviteID int64) error {
	return db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `DELETE FROM invites WHERE id = ? AND project_id = ?`, inviteID, projectID)
		if err := mustAffect(res, err, "invite"); err != nil {
			return err
		}
		return c.audit(ctx, change(projectID, "invite.delete", "invite", inviteID, nil))
	})
}

const inviteDetailColumns = `i.email, i.role, i.project_id, p.name, inviter.email, i.expires_at`

func scanInviteDetails(row interface{ Scan(...any) error }) (agentline.InviteDetails, error) {
	var d agentline.InviteDetails
	err := row.Scan(&d.Email, &d.Role, &d.ProjectID, &d.ProjectName, &d.InvitedBy, utc(&d.ExpiresAt))
	return d, err
}

// InviteByTokenHash returns what the live invitation of the token offers.
func (db *DB) InviteByTokenHash(ctx context.Context, tokenHash string) (agentline.InviteDetails, error) {
	d, err := scanInviteDetails(db.reader().queryRow(ctx,
		`SELECT `+inviteDetailColumns+liveInvites+` AND i.token_hash = ?`, db.now(), tokenHash))
	return d, notFound(err, "invite")
}

// RotateInviteToken gives the live invitation a new token hash, for the
// mail that carries the token, and returns what the mail says.
func (db *DB) RotateInviteToken(ctx context.Context, inviteID int64, tokenHash string) (agentline.InviteDetails, error) {
	var d agentline.InviteDetails
	err := db.tx(ctx, func(c conn) error {
		var err error
		d, err = scanInviteDetails(c.queryRow(ctx, `SELECT `+inviteDetailColumns+liveInvites+` AND i.id = ?`, db.now(), inviteID))
		if err != nil {
			return notFound(err, "invite")
		}
		_, err = c.exec(ctx, `UPDATE invites SET token_hash = ? WHERE id = ?`, tokenHash, inviteID)
		return err
	})
	return d, err
}

// useInvite marks the live invitation of the token used and returns it.
func (db *DB) useInvite(ctx context.Context, c conn, tokenHash string) (agentline.Invite, error) {
	i, err := scanInvite(c.queryRow(ctx, `SELECT `+inviteColumns+liveInvites+` AND i.token_hash = ?`, db.now(), tokenHash))
	if err != nil {
		return i, notFound(err, "invite")
	}
	res, err := c.exec(ctx, `UPDATE invites SET used_at = ? WHERE id = ? AND used_at IS NULL`, db.now(), i.ID)
	return i, mustAffect(res, err, "invite")
}

// AcceptInvite uses up the live invitation of the token for the account
// userID, which must be the invited email's, and makes it a member with
// the invitation's role (a member already there keeps their role).
func (db *DB) AcceptInvite(ctx context.Context, tokenHash string, userID int64) (agentline.Invite, error) {
	var i agentline.Invite
	err := db.tx(ctx, func(c conn) error {
		var err error
		if i, err = db.useInvite(ctx, c, tokenHash); err != nil {
			return err
		}
		var email string
		if err := c.queryRow(ctx, `SELECT email FROM users WHERE id = ? AND disabled_at IS NULL`, userID).Scan(&email); err != nil {
			return notFound(err, "user")
		}
		if email != i.Email {
			return agentline.Errorf(agentline.EForbidden, "this invitation is for another email address")
		}
		return db.join(ctx, c, i, userID, email)
	})
	if err != nil {
		return i, fmt.Errorf("accept invite: %w", err)
	}
	return i, nil
}

// AcceptInviteNewUser uses up the live invitation of the token by creating
// the invited email's account with passwordHash and making it a member. An
// email that has an account already is a conflict, and nothing changes.
func (db *DB) AcceptInviteNewUser(ctx context.Context, tokenHash, passwordHash string) (agentline.Invite, error) {
	var i agentline.Invite
	err := db.tx(ctx, func(c conn) error {
		var err error
		if i, err = db.useInvite(ctx, c, tokenHash); err != nil {
			return err
		}
		u, err := createUser(ctx, c, db.now(), i.Email, passwordHash)
		if err != nil {
			return err
		}
		if err := c.auditAs(ctx, asUser(ctx, u.ID, u.Email), change(0, "user.create", "user", u.ID, agentline.AuditChanges(nil, u))); err != nil {
			return err
		}
		return db.join(ctx, c, i, u.ID, u.Email)
	})
	if err != nil {
		return i, fmt.Errorf("accept invite: %w", err)
	}
	return i, nil
}

// join makes the person who accepted the invitation i a member, logged
// as their acceptance.
func (db *DB) join(ctx context.Context, c conn, i agentline.Invite, userID int64, email string) error {
	if _, err := c.exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (project_id, user_id) DO NOTHING`, i.ProjectID, userID, i.Role, db.now()); err != nil {
		return err
	}
	return c.auditAs(ctx, asUser(ctx, userID, email), change(i.ProjectID, "invite.accept", "invite", i.ID,
		map[string][2]any{"member": {nil, email}, "role": {nil, i.Role}}))
}
