package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

const apiKeyColumns = `id, project_id, name, role, prefix, coalesce(created_by, 0), created_at, expires_at, revoked_at, last_used_at`

func scanAPIKey(row interface{ Scan(...any) error }) (agentline.APIKey, error) {
	var k agentline.APIKey
	var expires, revoked, used sql.NullTime
	err := row.Scan(&k.ID, &k.ProjectID, &k.Name, &k.Role, &k.Prefix, &k.CreatedBy, utc(&k.CreatedAt), &expires, &revoked, &used)
	k.ExpiresAt, k.RevokedAt, k.LastUsedAt = nullUTC(expires), nullUTC(revoked), nullUTC(used)
	return k, err
}

func nullUTC(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// CreateAPIKey stores a new key of k.ProjectID by its hash; the key itself
// never reaches the store.
func (db *DB) CreateAPIKey(ctx context.Context, k agentline.APIKey, keyHash string) (agentline.APIKey, error) {
	k.CreatedAt = db.now()
	var expires any
	if k.ExpiresAt != nil {
		expires = k.ExpiresAt.UTC()
	}
	err := db.tx(ctx, func(c conn) error {
		if err := c.queryRow(ctx, `INSERT INTO api_keys (project_id, name, role, prefix, key_hash, created_by, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			k.ProjectID, k.Name, k.Role, k.Prefix, keyHash, k.CreatedBy, k.CreatedAt, expires).Scan(&k.ID); err != nil {
			return err
		}
		return c.audit(ctx, change(k.ProjectID, "api_key.create", "api_key", k.ID, agentline.AuditChanges(nil, k)))
	})
	if isForeignKeyViolation(err) {
		return k, agentline.NotFound("project")
	}
	if err != nil {
		return k, fmt.Errorf("create API key: %w", err)
	}
	return k, nil
}

// APIKeys lists the project's keys, revoked ones included, oldest first: a
// project has a handful, so the list is read whole.
func (db *DB) APIKeys(ctx context.Context, projectID int64) ([]agentline.APIKey, error) {
	return queryAll(ctx, db.reader(), scanAPIKey, `SELECT `+apiKeyColumns+` FROM api_keys WHERE project_id = ? ORDER BY id`, projectID)
}

// APIKeyByHash finds a key by the hash of the key, whatever its state:
// the caller tells revoked and expired keys apart from unknown ones. It
// reads from the writer so that a revocation on any instance is seen by
// the very next request.
func (db *DB) APIKeyByHash(ctx context.Context, keyHash string) (agentline.APIKey, error) {
	k, err := scanAPIKey(db.writer().queryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE key_hash = ?`, keyHash))
	return k, notFound(err, "API key")
}

// RevokeAPIKey marks the project's key revoked; revoking it again keeps the
// first time.
func (db *DB) RevokeAPIKey(ctx context.Context, projectID, id int64) error {
	return db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE project_id = ? AND id = ?`,
			db.now(), projectID, id)
		if err := mustAffect(res, err, "API key"); err != nil {
			return err
		}
		return c.audit(ctx, change(projectID, "api_key.revoke", "api_key", id, nil))
	})
}

// TouchAPIKeys records when each key was last used; a later time never
// goes back.
func (db *DB) TouchAPIKeys(ctx context.Context, used map[int64]time.Time) error {
	for id, at := range used {
		if _, err := db.writer().exec(ctx, `UPDATE api_keys SET last_used_at = ?
			WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, at.UTC(), id, at.UTC()); err != nil {
			return fmt.Errorf("touch API key %d: %w", id, err)
		}
	}
	return nil
}
