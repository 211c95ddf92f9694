package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// OIDCSignIn finds or makes the account of an OpenID Connect identity
// (issuer and subject) whose provider vouched for email, in one
// transaction:
//   - the account that remembers the identity, whatever its email now;
//   - else the account of the email, which then remembers the identity,
//     unless it remembers another one already (a conflict: a second
//     identity cannot claim it);
//   - else, when create is true, a new account with no password, which
//     joins every project whose live invitation is for the email.
//
// created tells that the account was just made.
func (db *DB) OIDCSignIn(ctx context.Context, issuer, subject, email string, create bool) (u agentline.User, created bool, err error) {
	err = db.tx(ctx, func(c conn) error {
		u, err = scanUser(c.queryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.oidc_issuer = ? AND u.oidc_subject = ?`, issuer, subject))
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var linked sql.NullString
		u, err = scanUser(c.queryRow(ctx, `SELECT `+userColumns+`, u.oidc_subject FROM users u WHERE u.email = ?`, NormalizeEmail(email)), &linked)
		switch {
		case err == nil && linked.Valid:
			return agentline.Errorf(agentline.EConflict, "the account of %s signs in with another identity", u.Email)
		case err == nil:
			_, err = c.exec(ctx, `UPDATE users SET oidc_issuer = ?, oidc_subject = ? WHERE id = ?`, issuer, subject, u.ID)
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return err
		case !create:
			return agentline.NotFound("user")
		}
		// No password can match an empty hash: the account signs in
		// through its provider until someone sets one by a reset link.
		if u, err = createUser(ctx, c, db.now(), email, ""); err != nil {
			return err
		}
		created = true
		if err := c.auditAs(ctx, asUser(ctx, u.ID, u.Email), change(0, "user.create", "user", u.ID, agentline.AuditChanges(nil, u))); err != nil {
			return err
		}
		if _, err = c.exec(ctx, `UPDATE users SET oidc_issuer = ?, oidc_subject = ? WHERE id = ?`, issuer, subject, u.ID); err != nil {
			return err
		}
		return db.joinInvitedEmail(ctx, c, u)
	})
	if err != nil {
		return u, false, fmt.Errorf("oidc sign-in: %w", err)
	}
	return u, created, nil
}

// joinInvitedEmail uses up every live invitation for the new account's
// email, making it a member of each project with the invitation's role.
func (db *DB) joinInvitedEmail(ctx context.Context, c conn, u agentline.User) error {
	invites, err := queryAll(ctx, c, scanInvite, `SELECT `+inviteColumns+liveInvites+` AND i.email = ? ORDER BY i.id`, db.now(), u.Email)
	if err != nil {
		return err
	}
	for _, i := range invites {
		if _, err := c.exec(ctx, `UPDATE invites SET used_at = ? WHERE id = ?`, db.now(), i.ID); err != nil {
			return err
		}
		if err := db.join(ctx, c, i, u.ID, u.Email); err != nil {
			return err
		}
	}
	return nil
}

// CreateOIDCSignIn keeps a single sign-on under way under the hash of its
// state, bound to the hash of the browser's binding, until expires: the
// provider's callback may then reach any instance on this database.
func (db *DB) CreateOIDCSignIn(ctx context.Context, stateHash, bindingHash string, expires time.Time) error {
	_, err := db.writer().exec(ctx, `INSERT INTO oidc_sign_ins (state_hash, binding_hash, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		stateHash, bindingHash, db.now(), expires.UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("create oidc sign-in: %w", err)
	}
	return nil
}

// TakeOIDCSignIn uses up the sign-in under way of stateHash and returns its
// binding's hash and expiry, expired or not (the caller tells the person
// which). The row is deleted in the statement that reads it, so of two
// callbacks with one state, on any instances, one gets it and the other
// not found.
func (db *DB) TakeOIDCSignIn(ctx context.Context, stateHash string) (bindingHash string, expires time.Time, err error) {
	err = db.writer().queryRow(ctx, `DELETE FROM oidc_sign_ins WHERE state_hash = ? RETURNING binding_hash, expires_at`, stateHash).
		Scan(&bindingHash, utc(&expires))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("take oidc sign-in: %w", notFound(err, "sign-in"))
	}
	return bindingHash, expires, nil
}

// PruneOIDCSignIns deletes the sign-ins under way that expired before
// before, which no callback can use any more.
func (db *DB) PruneOIDCSignIns(ctx context.Context, before time.Time) (int64, error) {
	n, err := db.pruneLoop(ctx, `DELETE FROM oidc_sign_ins WHERE state_hash IN (SELECT state_hash FROM oidc_sign_ins
		WHERE expires_at < ? ORDER BY expires_at LIMIT ?)`, before.UTC(), pruneBatch)
	if err != nil {
		return n, fmt.Errorf("prune oidc sign-ins: %w", err)
	}
	return n, nil
}
