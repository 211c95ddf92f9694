package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// CreatePasswordReset stores a reset link of the user under the hash of its
// token; createdBy is the administrator who made it, or 0.
func (db *DB) CreatePasswordReset(ctx context.Context, userID int64, tokenHash string, createdBy int64, expiresAt time.Time) error {
	var by any
	if createdBy != 0 {
		by = createdBy
	}
	err := db.tx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `INSERT INTO password_resets (user_id, token_hash, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			userID, tokenHash, by, db.now(), expiresAt.UTC()); err != nil {
			return err
		}
		return c.audit(ctx, change(0, "user.password_reset_link", "user", userID, nil))
	})
	if err != nil {
		return fmt.Errorf("create password reset: %w", err)
	}
	return nil
}

// ResetPassword uses up the live reset link of the token: it sets the
// account's password to passwordHash, ends all its sessions and every other
// reset link of it, in one transaction. A disabled account's link does
// not work.
func (db *DB) ResetPassword(ctx context.Context, tokenHash, passwordHash string) (agentline.User, error) {
	var u agentline.User
	err := db.tx(ctx, func(c conn) error {
		var err error
		u, err = scanUser(c.queryRow(ctx, `SELECT `+userColumns+` FROM password_resets r JOIN users u ON u.id = r.user_id
			WHERE r.token_hash = ? AND r.used_at IS NULL AND r.expires_at > ? AND u.disabled_at IS NULL`, tokenHash, db.now()))
		if err != nil {
			return notFound(err, "reset link")
		}
		if _, err := c.exec(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, passwordHash, u.ID); err != nil {
			return err
		}
		if err := endAccess(ctx, c, db.now(), u.ID, ""); err != nil {
			return err
		}
		return c.auditAs(ctx, asUser(ctx, u.ID, u.Email), change(0, "user.password_reset", "user", u.ID,
			map[string][2]any{"password": agentline.MaskedChange(true, true)}))
	})
	return u, err
}
