package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentline/agentline"
)

const providerAccountColumns = `project_id, kind, base_url, key_last4, updated_at, sealed_key`

func scanProviderAccount(row interface{ Scan(...any) error }) (agentline.ProviderAccount, error) {
	var a agentline.ProviderAccount
	return a, row.Scan(&a.ProjectID, &a.Kind, &a.BaseURL, &a.KeyLast4, utc(&a.UpdatedAt), &a.SealedKey)
}

// SaveProviderAccount stores the project's account with a.Kind, replacing
// the one it had. The key arrives sealed: the store never sees it in
// clear.
func (db *DB) SaveProviderAccount(ctx context.Context, a agentline.ProviderAccount) (agentline.ProviderAccount, error) {
	a.UpdatedAt = db.now()
	err := db.tx(ctx, func(c conn) error {
		before, err := scanProviderAccount(c.queryRow(ctx, `SELECT `+providerAccountColumns+` FROM provider_accounts
			WHERE project_id = ? AND kind = ?`, a.ProjectID, a.Kind))
		existed := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := c.exec(ctx, `INSERT INTO provider_accounts (project_id, kind, base_url, sealed_key, key_last4, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (project_id, kind) DO UPDATE SET base_url = excluded.base_url, sealed_key = excluded.sealed_key,
				key_last4 = excluded.key_last4, updated_at = excluded.updated_at`,
			a.ProjectID, a.Kind, a.BaseURL, a.SealedKey, a.KeyLast4, a.UpdatedAt); err != nil {
			return err
		}
		var changes map[string][2]any
		if existed {
			changes = agentline.AuditChanges(before, a)
		} else {
			changes = agentline.AuditChanges(nil, a)
		}
		if changes == nil {
			changes = map[string][2]any{}
		}
		changes["key"] = agentline.MaskedChange(existed, true)
		return c.audit(ctx, audited{project: a.ProjectID, action: "provider_account.save", kind: "provider_account", id: string(a.Kind), changes: changes})
	})
	if isForeignKeyViolation(err) {
		return a, agentline.NotFound("project")
	}
	if err != nil {
		return a, fmt.Errorf("save provider account: %w", err)
	}
	return a, nil
}

// ProviderAccounts lists the project's provider accounts by kind: at most
// one per kind, so a short list read whole.
func (db *DB) ProviderAccounts(ctx context.Context, projectID int64) ([]agentline.ProviderAccount, error) {
	return queryAll(ctx, db.reader(), scanProviderAccount, `SELECT `+providerAccountColumns+` FROM provider_accounts
		WHERE project_id = ? ORDER BY kind`, projectID)
}

// ProviderAccount is the project's account with kind; ErrNotFound when it
// has none (its agents use the deployment's).
func (db *DB) ProviderAccount(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderAccount, error) {
	a, err := scanProviderAccount(db.reader().queryRow(ctx, `SELECT `+providerAccountColumns+` FROM provider_accounts
		WHERE project_id = ? AND kind = ?`, projectID, kind))
	return a, notFound(err, "provider account")
}

// DeleteProviderAccount removes the project's account with kind.
func (db *DB) DeleteProviderAccount(ctx context.Context, projectID int64, kind agentline.Provider) error {
	return db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `DELETE FROM provider_accounts WHERE project_id = ? AND kind = ?`, projectID, kind)
		if err := mustAffect(res, err, "provider account"); err != nil {
			return err
		}
		return c.audit(ctx, audited{project: projectID, action: "provider_account.delete", kind: "provider_account", id: string(kind)})
	})
}

// Reseal is what rotation does to one sealed value: context is the
// additional data it was sealed with; changed false leaves the row alone.
type Reseal func(sealed, context string) (out string, changed bool, err error)

// ResealSecrets passes every sealed secret the database holds through
// reseal and stores what changed, one transaction per table: a failure
// leaves that table as it was, and running it again redoes only what is
// left. It returns how many values changed.
func (db *DB) ResealSecrets(ctx context.Context, reseal Reseal) (int, error) {
	changed := 0
	err := db.tx(ctx, func(c conn) error {
		accounts, err := queryAll(ctx, c, scanProviderAccount, `SELECT `+providerAccountColumns+` FROM provider_accounts ORDER BY project_id, kind`)
		if err != nil {
			return err
		}
		for _, a := range accounts {
			out, ok, err := reseal(a.SealedKey, agentline.ProviderKeyContext(a.ProjectID, a.Kind))
			if err != nil {
				return fmt.Errorf("provider account %s of project %d: %w", a.Kind, a.ProjectID, err)
			}
			if !ok {
				continue
			}
			if _, err := c.exec(ctx, `UPDATE provider_accounts SET sealed_key = ? WHERE project_id = ? AND kind = ?`,
				out, a.ProjectID, a.Kind); err != nil {
				return err
			}
			changed++
		}
		return nil
	})
	if err != nil {
		return changed, err
	}
	n, err := db.resealToolHeaders(ctx, reseal)
	return changed + n, err
}

// resealToolHeaders is ResealSecrets for MCP tools' sealed headers.
func (db *DB) resealToolHeaders(ctx context.Context, reseal Reseal) (int, error) {
	changed := 0
	err := db.tx(ctx, func(c conn) error {
		list, err := queryAll(ctx, c, scanTool, `SELECT `+toolColumns+` FROM agent_tools WHERE sealed_headers <> '' ORDER BY id`)
		if err != nil {
			return err
		}
		for _, t := range list {
			out, ok, err := reseal(t.SealedHeaders, agentline.MCPHeadersContext(t.ProjectID, t.AgentID, t.Name))
			if err != nil {
				return fmt.Errorf("headers of tool %d: %w", t.ID, err)
			}
			if !ok {
				continue
			}
			if _, err := c.exec(ctx, `UPDATE agent_tools SET sealed_headers = ? WHERE id = ?`, out, t.ID); err != nil {
				return err
			}
			changed++
		}
		return nil
	})
	return changed, err
}
