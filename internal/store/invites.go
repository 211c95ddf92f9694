package store

import (
	"context"
	"fmt"

	"github.com/agentline/agentline"
)

const inviteColumns = `id, project_id, kind, email, role, created_at, expires_at`

func scanInvite(row interface{ Scan(...any) error }) (agentline.Invite, error) {
	var i agentline.Invite
	err := row.Scan(&i.ID, &i.ProjectID, &i.Kind, &i.Email, &i.Role, utc(&i.CreatedAt), utc(&i.ExpiresAt))
	return i, err
}

// CreateInvite stores an invite or reset link under the hash of its token.
func (db *DB) CreateInvite(ctx context.Context, i agentline.Invite, tokenHash string, createdBy int64) (agentline.Invite, error) {
	i.Email, i.CreatedAt = NormalizeEmail(i.Email), db.now()
	err := db.writer().queryRow(ctx,
		`INSERT INTO invites (project_id, kind, email, role, token_hash, created_by, created_at, expires_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		i.ProjectID, i.Kind, i.Email, i.Role, tokenHash, createdBy, i.CreatedAt, i.ExpiresAt.UTC()).Scan(&i.ID)
	if err != nil {
		return i, fmt.Errorf("create invite: %w", err)
	}
	return i, nil
}

// Invites lists a project's links that are neither used nor expired.
func (db *DB) Invites(ctx context.Context, projectID int64) ([]agentline.Invite, error) {
	return queryAll(ctx, db.reader(), scanInvite,
		`SELECT `+inviteColumns+` FROM invites WHERE project_id = ? AND used_at IS NULL AND expires_at > ? ORDER BY id`,
		projectID, db.now())
}

// DeleteInvite withdraws a link of the project.
func (db *DB) DeleteInvite(ctx context.Context, projectID, inviteID int64) error {
	res, err := db.writer().exec(ctx, `DELETE FROM invites WHERE id = ? AND project_id = ?`, inviteID, projectID)
	return mustAffect(res, err, "invite")
}

// InviteByTokenHash returns the live (unused, unexpired) link of the token.
func (db *DB) InviteByTokenHash(ctx context.Context, tokenHash string) (agentline.Invite, error) {
	i, err := scanInvite(db.reader().queryRow(ctx,
		`SELECT `+inviteColumns+` FROM invites WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`, tokenHash, db.now()))
	return i, notFound(err, "invite")
}

// AcceptInvite uses up the live link of the token, once, and does what it
// says in the same transaction. An invite makes the email's user a member
// with the role (a member already there keeps their role); with a
// passwordHash it first creates that user, which must not exist yet. A reset sets the user's password to
// passwordHash and ends all their sign-ins.
func (db *DB) AcceptInvite(ctx context.Context, tokenHash, passwordHash string) (agentline.Invite, error) {
	var i agentline.Invite
	err := db.tx(ctx, func(c conn) error {
		var err error
		i, err = scanInvite(c.queryRow(ctx, `UPDATE invites SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?
			RETURNING `+inviteColumns, db.now(), tokenHash, db.now()))
		if err != nil {
			return notFound(err, "invite")
		}
		var userID int64
		err = c.queryRow(ctx, `SELECT id FROM users WHERE email = ?`, i.Email).Scan(&userID)
		if i.Kind == agentline.InviteReset {
			if err != nil {
				return notFound(err, "user")
			}
			if _, err := c.exec(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, passwordHash, userID); err != nil {
				return err
			}
			_, err = c.exec(ctx, `DELETE FROM auth_sessions WHERE user_id = ?`, userID)
			return err
		}
		if passwordHash != "" {
			// A new account: the caller found none with this email.
			err = c.queryRow(ctx, `INSERT INTO users (email, password_hash, created_at) VALUES (?, ?, ?) RETURNING id`,
				i.Email, passwordHash, db.now()).Scan(&userID)
			if isUniqueViolation(err) {
				return agentline.Errorf(agentline.EConflict, "an account with email %s exists; accept with its password", i.Email)
			}
		}
		if err != nil {
			return notFound(err, "user")
		}
		_, err = c.exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (project_id, user_id) DO NOTHING`, i.ProjectID, userID, i.Role, db.now())
		return err
	})
	if err != nil {
		return i, fmt.Errorf("accept invite: %w", err)
	}
	return i, nil
}

// SetPassword stores a user's new password hash and ends their other
// sign-ins: every session but the one whose token hash is keep.
func (db *DB) SetPassword(ctx context.Context, userID int64, passwordHash, keep string) error {
	return db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, passwordHash, userID)
		if err := mustAffect(res, err, "user"); err != nil {
			return err
		}
		_, err = c.exec(ctx, `DELETE FROM auth_sessions WHERE user_id = ? AND token_hash <> ?`, userID, keep)
		return err
	})
}
