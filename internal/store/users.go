package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// NormalizeEmail is the form emails are stored and looked up in, so that they
// are unique case-insensitively.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

const userColumns = `u.id, u.email, u.is_admin, u.disabled_at IS NOT NULL, u.created_at`

func scanUser(row interface{ Scan(...any) error }, extra ...any) (agentline.User, error) {
	var u agentline.User
	err := row.Scan(append([]any{&u.ID, &u.Email, &u.Admin, &u.Disabled, utc(&u.CreatedAt)}, extra...)...)
	return u, err
}

// CreateUser stores a new user; an email already taken is a conflict. The
// very first account is an instance administrator, whichever way it is
// made, decided in the insert itself so that two racing first accounts
// cannot both be.
func (db *DB) CreateUser(ctx context.Context, email, passwordHash string) (agentline.User, error) {
	var u agentline.User
	err := db.tx(ctx, func(c conn) error {
		var err error
		if u, err = createUser(ctx, c, db.now(), email, passwordHash); err != nil {
			return err
		}
		return c.audit(ctx, change(0, "user.create", "user", u.ID, agentline.AuditChanges(nil, u)))
	})
	return u, err
}

func createUser(ctx context.Context, c conn, now time.Time, email, passwordHash string) (agentline.User, error) {
	u := agentline.User{Email: NormalizeEmail(email), CreatedAt: now}
	err := c.queryRow(ctx,
		`INSERT INTO users (email, password_hash, is_admin, created_at)
		 VALUES (?, ?, NOT EXISTS (SELECT 1 FROM users), ?) RETURNING id, is_admin`,
		u.Email, passwordHash, u.CreatedAt).Scan(&u.ID, &u.Admin)
	if isUniqueViolation(err) {
		return u, agentline.Errorf(agentline.EConflict, "a user with email %s already exists", u.Email)
	}
	if err != nil {
		return u, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// CountUsers returns how many users exist.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := db.reader().queryRow(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, err
}

// UserByEmail returns the user and their password hash.
func (db *DB) UserByEmail(ctx context.Context, email string) (agentline.User, string, error) {
	var hash string
	u, err := scanUser(db.reader().queryRow(ctx,
		`SELECT `+userColumns+`, u.password_hash FROM users u WHERE u.email = ?`, NormalizeEmail(email)), &hash)
	return u, hash, notFound(err, "user")
}

// User returns the user with id.
func (db *DB) User(ctx context.Context, id int64) (agentline.User, error) {
	u, err := scanUser(db.reader().queryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = ?`, id))
	return u, notFound(err, "user")
}

// Users lists every account of the instance, for its administrators.
func (db *DB) Users(ctx context.Context) ([]agentline.User, error) {
	return queryAll(ctx, db.reader(), func(row interface{ Scan(...any) error }) (agentline.User, error) { return scanUser(row) },
		`SELECT `+userColumns+` FROM users u ORDER BY u.id`)
}

// UpdateUser applies ch to the user. The last enabled administrator can be
// neither disabled nor unmade (a conflict), so the instance always keeps
// one. Disabling ends the account's sessions and its reset links.
func (db *DB) UpdateUser(ctx context.Context, id int64, ch agentline.UserChange) (agentline.User, error) {
	var u agentline.User
	err := db.tx(ctx, func(c conn) error {
		var err error
		if u, err = scanUser(c.queryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = ?`, id)); err != nil {
			return notFound(err, "user")
		}
		before := u
		losesAdmin := u.Admin && !u.Disabled &&
			((ch.Admin != nil && !*ch.Admin) || (ch.Disabled != nil && *ch.Disabled))
		if losesAdmin {
			if err := lastAdminCheck(ctx, c); err != nil {
				return err
			}
		}
		if ch.Admin != nil {
			u.Admin = *ch.Admin
		}
		if ch.Disabled != nil && *ch.Disabled != u.Disabled {
			u.Disabled = *ch.Disabled
			if u.Disabled {
				if err := endAccess(ctx, c, db.now(), id, ""); err != nil {
					return err
				}
			}
		}
		if u.Disabled {
			_, err = c.exec(ctx, `UPDATE users SET is_admin = ?, disabled_at = COALESCE(disabled_at, ?) WHERE id = ?`, u.Admin, db.now(), id)
		} else {
			_, err = c.exec(ctx, `UPDATE users SET is_admin = ?, disabled_at = NULL WHERE id = ?`, u.Admin, id)
		}
		if err != nil {
			return err
		}
		return c.audit(ctx, change(0, "user.update", "user", id, agentline.AuditChanges(before, u)))
	})
	return u, err
}

func lastAdminCheck(ctx context.Context, c conn) error {
	var admins int
	if err := c.queryRow(ctx, `SELECT count(*) FROM users WHERE is_admin AND disabled_at IS NULL`).Scan(&admins); err != nil {
		return err
	}
	if admins <= 1 {
		return agentline.Errorf(agentline.EConflict, "this is the last instance administrator: make another account administrator first")
	}
	return nil
}

// endAccess signs the user out of every session but keep's (a token hash,
// or "" for all) and uses up every outstanding reset link of theirs.
func endAccess(ctx context.Context, c conn, now time.Time, userID int64, keep string) error {
	if _, err := c.exec(ctx, `DELETE FROM auth_sessions WHERE user_id = ? AND token_hash <> ?`, userID, keep); err != nil {
		return err
	}
	_, err := c.exec(ctx, `UPDATE password_resets SET used_at = ? WHERE user_id = ? AND used_at IS NULL`, now, userID)
	return err
}

// SetPassword stores a user's new password hash, ends their other
// sign-ins (every session but the one whose token hash is keep) and uses
// up their outstanding reset links.
func (db *DB) SetPassword(ctx context.Context, userID int64, passwordHash, keep string) error {
	return db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, passwordHash, userID)
		if err := mustAffect(res, err, "user"); err != nil {
			return err
		}
		if err := endAccess(ctx, c, db.now(), userID, keep); err != nil {
			return err
		}
		return c.audit(ctx, change(0, "user.password_set", "user", userID,
			map[string][2]any{"password": agentline.MaskedChange(true, true)}))
	})
}

// CreateAuthSession stores a sign-in under the hash of its token, logged
// as a sign-in by password.
func (db *DB) CreateAuthSession(ctx context.Context, userID int64, tokenHash string, expiresAt time.Time) error {
	return db.StartAuthSession(ctx, userID, tokenHash, expiresAt, "auth.sign_in")
}

// StartAuthSession stores a sign-in under the hash of its token and logs it
// as action (a sign-in by password, by single sign-on, an administrator's
// break-glass sign-in) in the same transaction.
func (db *DB) StartAuthSession(ctx context.Context, userID int64, tokenHash string, expiresAt time.Time, action string) error {
	err := db.tx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `INSERT INTO auth_sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
			tokenHash, userID, db.now(), expiresAt.UTC()); err != nil {
			return err
		}
		return c.audit(ctx, change(0, action, "user", userID, nil))
	})
	if err != nil {
		return fmt.Errorf("create auth session: %w", err)
	}
	return nil
}

// UserByTokenHash returns the user signed in with the token of this hash, if
// that sign-in has not expired and the account is not disabled.
func (db *DB) UserByTokenHash(ctx context.Context, tokenHash string) (agentline.User, error) {
	u, err := scanUser(db.reader().queryRow(ctx,
		`SELECT `+userColumns+` FROM auth_sessions s JOIN users u ON u.id = s.user_id
		 WHERE s.token_hash = ? AND s.expires_at > ? AND u.disabled_at IS NULL`, tokenHash, db.now()))
	return u, notFound(err, "session")
}

// DeleteAuthSession ends a sign-in; ending one that is gone is no error.
func (db *DB) DeleteAuthSession(ctx context.Context, tokenHash string) error {
	return db.tx(ctx, func(c conn) error {
		var userID int64
		err := c.queryRow(ctx, `DELETE FROM auth_sessions WHERE token_hash = ? RETURNING user_id`, tokenHash).Scan(&userID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		return c.audit(ctx, change(0, "auth.sign_out", "user", userID, nil))
	})
}

// DeleteExpiredAuthSessions removes sign-ins past their expiry.
func (db *DB) DeleteExpiredAuthSessions(ctx context.Context) (int64, error) {
	res, err := db.writer().exec(ctx, `DELETE FROM auth_sessions WHERE expires_at <= ?`, db.now())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
