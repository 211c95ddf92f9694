package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

const webhookColumns = `id, project_id, url, description, events, enabled, disabled_reason, secret, previous_secret,
	previous_secret_until, failing_since, created_at, updated_at`

func scanWebhook(row interface{ Scan(...any) error }) (agentline.WebhookEndpoint, error) {
	var e agentline.WebhookEndpoint
	var events string
	var until, failing sql.NullTime
	err := row.Scan(&e.ID, &e.ProjectID, &e.URL, &e.Description, &events, &e.Enabled, &e.DisabledReason, &e.Secret, &e.PreviousSecret,
		&until, &failing, utc(&e.CreatedAt), utc(&e.UpdatedAt))
	if err != nil {
		return e, err
	}
	e.PreviousSecretUntil, e.FailingSince = nullTime(until), nullTime(failing)
	if err := json.Unmarshal([]byte(events), &e.Events); err != nil {
		return e, fmt.Errorf("webhook endpoint %d events: %w", e.ID, err)
	}
	return e, nil
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// CreateWebhook stores a new endpoint in e.ProjectID.
func (db *DB) CreateWebhook(ctx context.Context, e agentline.WebhookEndpoint) (agentline.WebhookEndpoint, error) {
	defer db.webhooksChanged()
	events, err := json.Marshal(e.Events)
	if err != nil {
		return e, err
	}
	e.CreatedAt = db.now()
	e.UpdatedAt = e.CreatedAt
	err = db.tx(ctx, func(c conn) error {
		if err := c.queryRow(ctx, `INSERT INTO webhook_endpoints (project_id, url, description, events, enabled, secret, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, e.ProjectID, e.URL, e.Description, string(events), e.Enabled, e.Secret,
			e.CreatedAt, e.UpdatedAt).Scan(&e.ID); err != nil {
			return err
		}
		changes := agentline.AuditChanges(nil, e)
		changes["secret"] = agentline.MaskedChange(false, true)
		return c.audit(ctx, change(e.ProjectID, "webhook.create", "webhook", e.ID, changes))
	})
	if isForeignKeyViolation(err) {
		return e, agentline.NotFound("project")
	}
	if err != nil {
		return e, fmt.Errorf("create webhook endpoint: %w", err)
	}
	return e, nil
}

// Webhook returns an endpoint of the project.
func (db *DB) Webhook(ctx context.Context, projectID, id int64) (agentline.WebhookEndpoint, error) {
	e, err := scanWebhook(db.reader().queryRow(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints WHERE project_id = ? AND id = ?`, projectID, id))
	return e, notFound(err, "webhook endpoint")
}

// Webhooks lists the project's endpoints, oldest first.
func (db *DB) Webhooks(ctx context.Context, projectID int64) ([]agentline.WebhookEndpoint, error) {
	return queryAll(ctx, db.reader(), scanWebhook, `SELECT `+webhookColumns+` FROM webhook_endpoints WHERE project_id = ? ORDER BY id`, projectID)
}

// UpdateWebhook stores e's url, description, events and enabled. Enabling
// an endpoint clears why and since when it failed.
func (db *DB) UpdateWebhook(ctx context.Context, e agentline.WebhookEndpoint) (agentline.WebhookEndpoint, error) {
	defer db.webhooksChanged()
	events, err := json.Marshal(e.Events)
	if err != nil {
		return e, err
	}
	err = db.tx(ctx, func(c conn) error {
		e, err = updateAudited(ctx, c, e.ProjectID, "webhook.update", "webhook", e.ID, webhookOn(ctx, e.ProjectID, e.ID), func(c conn) error {
			_, err := c.exec(ctx, `UPDATE webhook_endpoints SET url = ?, description = ?, events = ?, enabled = ?,
				disabled_reason = CASE WHEN ? THEN '' ELSE disabled_reason END,
				failing_since = CASE WHEN ? AND NOT enabled THEN NULL ELSE failing_since END, updated_at = ?
				WHERE project_id = ? AND id = ?`, e.URL, e.Description, string(events), e.Enabled, e.Enabled, e.Enabled, db.now(), e.ProjectID, e.ID)
			return err
		})
		return err
	})
	return e, err
}

// DeleteWebhook deletes an endpoint of the project with its deliveries.
func (db *DB) DeleteWebhook(ctx context.Context, projectID, id int64) error {
	defer db.webhooksChanged()
	return db.deleteOwned(ctx, agentline.KindWebhook, projectID, id, "webhook endpoint")
}

// RotateWebhookSecret makes secret the endpoint's signing secret; the one
// it replaces keeps signing until until.
func (db *DB) RotateWebhookSecret(ctx context.Context, projectID, id int64, secret string, until time.Time) (agentline.WebhookEndpoint, error) {
	defer db.webhooksChanged()
	var e agentline.WebhookEndpoint
	err := db.tx(ctx, func(c conn) error {
		var err error
		e, err = updateAudited(ctx, c, projectID, "webhook.rotate_secret", "webhook", id, webhookOn(ctx, projectID, id), func(c conn) error {
			_, err := c.exec(ctx, `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = ?, secret = ?, updated_at = ?
				WHERE project_id = ? AND id = ?`, until.UTC(), secret, db.now(), projectID, id)
			return err
		})
		return err
	})
	return e, err
}

// webhookOn reads an endpoint of the project in a transaction's conn.
func webhookOn(ctx context.Context, projectID, id int64) func(conn) (agentline.WebhookEndpoint, error) {
	return func(c conn) (agentline.WebhookEndpoint, error) {
		e, err := scanWebhook(c.queryRow(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints WHERE project_id = ? AND id = ?`, projectID, id))
		return e, notFound(err, "webhook endpoint")
	}
}

// DisableWebhook disables an endpoint (by its id alone: the delivery worker
// has no caller) and says why.
func (db *DB) DisableWebhook(ctx context.Context, id int64, reason string) error {
	defer db.webhooksChanged()
	res, err := db.writer().exec(ctx, `UPDATE webhook_endpoints SET enabled = FALSE, disabled_reason = ?, updated_at = ? WHERE id = ?`, reason, db.now(), id)
	return mustAffect(res, err, "webhook endpoint")
}
