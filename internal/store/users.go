package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// NormalizeEmail is the form emails are stored and looked up in, so that they
// are unique case-insensitively.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CreateUser stores a new user; an email already taken is a conflict.
func (db *DB) CreateUser(ctx context.Context, email, passwordHash string) (agentline.User, error) {
	u := agentline.User{Email: NormalizeEmail(email), CreatedAt: db.now()}
	err := db.writer().queryRow(ctx,
		`INSERT INTO users (email, password_hash, created_at) VALUES (?, ?, ?) RETURNING id`,
		u.Email, passwordHash, u.CreatedAt).Scan(&u.ID)
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
	var u agentline.User
	var hash string
	err := db.reader().queryRow(ctx,
		`SELECT id, email, password_hash, created_at FROM users WHERE email = ?`, NormalizeEmail(email)).
		Scan(&u.ID, &u.Email, &hash, utc(&u.CreatedAt))
	return u, hash, notFound(err, "user")
}

// CreateAuthSession stores a sign-in under the hash of its token.
func (db *DB) CreateAuthSession(ctx context.Context, userID int64, tokenHash string, expiresAt time.Time) error {
	_, err := db.writer().exec(ctx,
		`INSERT INTO auth_sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		tokenHash, userID, db.now(), expiresAt.UTC())
	if err != nil {
		return fmt.Errorf("create auth session: %w", err)
	}
	return nil
}

// UserByTokenHash returns the user signed in with the token of this hash, if
// that sign-in has not expired.
func (db *DB) UserByTokenHash(ctx context.Context, tokenHash string) (agentline.User, error) {
	var u agentline.User
	err := db.reader().queryRow(ctx,
		`SELECT u.id, u.email, u.created_at FROM auth_sessions s JOIN users u ON u.id = s.user_id
		 WHERE s.token_hash = ? AND s.expires_at > ?`, tokenHash, db.now()).
		Scan(&u.ID, &u.Email, utc(&u.CreatedAt))
	return u, notFound(err, "session")
}

// DeleteAuthSession ends a sign-in; ending one that is gone is no error.
func (db *DB) DeleteAuthSession(ctx context.Context, tokenHash string) error {
	_, err := db.writer().exec(ctx, `DELETE FROM auth_sessions WHERE token_hash = ?`, tokenHash)
	return err
}

// DeleteExpiredAuthSessions removes sign-ins past their expiry.
func (db *DB) DeleteExpiredAuthSessions(ctx context.Context) (int64, error) {
	res, err := db.writer().exec(ctx, `DELETE FROM auth_sessions WHERE expires_at <= ?`, db.now())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
