package store

import (
	"context"
	"fmt"
	"math"

	"github.com/agentline/agentline"
)

const deliveryColumns = `d.id, d.project_id, d.endpoint_id, d.event_id, v.type, d.subject, d.status, d.attempts, d.last_status,
	d.give_up_at, d.created_at, d.updated_at`

const deliveryFrom = ` FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id `

func scanDelivery(row interface{ Scan(...any) error }) (agentline.WebhookDelivery, error) {
	var d agentline.WebhookDelivery
	err := row.Scan(&d.ID, &d.ProjectID, &d.EndpointID, &d.EventID, &d.EventType, &d.Subject, &d.Status, &d.Attempts, &d.LastStatus,
		utc(&d.GiveUpAt), utc(&d.CreatedAt), utc(&d.UpdatedAt))
	return d, err
}

func scanAttempt(row interface{ Scan(...any) error }) (agentline.WebhookAttempt, error) {
	var a agentline.WebhookAttempt
	err := row.Scan(utc(&a.At), &a.StatusCode, &a.LatencyMS, &a.Response, &a.Error)
	return a, err
}

// WebhookDeliveries lists an endpoint's deliveries, newest first.
func (db *DB) WebhookDeliveries(ctx context.Context, projectID, endpointID int64, limit, offset int) ([]agentline.WebhookDelivery, error) {
	return db.webhookDeliveries(ctx, projectID, endpointID, 0, limit, offset)
}

// WebhookDeliveriesBefore lists an endpoint's deliveries older than the
// delivery before (any when 0), newest first: a page after a cursor.
func (db *DB) WebhookDeliveriesBefore(ctx context.Context, projectID, endpointID, before int64, limit int) ([]agentline.WebhookDelivery, error) {
	return db.webhookDeliveries(ctx, projectID, endpointID, before, limit, 0)
}

func (db *DB) webhookDeliveries(ctx context.Context, projectID, endpointID, before int64, limit, offset int) ([]agentline.WebhookDelivery, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	return queryAll(ctx, db.reader(), scanDelivery, `SELECT `+deliveryColumns+deliveryFrom+
		`WHERE d.project_id = ? AND d.endpoint_id = ? AND d.id < ? ORDER BY d.id DESC LIMIT ? OFFSET ?`,
		projectID, endpointID, before, limit, offset)
}

// WebhookDelivery returns one delivery of the project's endpoint with its
// attempts, both read at one moment (readTx): its attempt count is the
// length of its history.
func (db *DB) WebhookDelivery(ctx context.Context, projectID, endpointID, id int64) (agentline.WebhookDelivery, error) {
	return readIn(ctx, db, func(c conn) (agentline.WebhookDelivery, error) {
		return webhookDeliveryIn(ctx, c, projectID, endpointID, id)
	})
}

// webhookDeliveryIn is WebhookDelivery read on c.
func webhookDeliveryIn(ctx context.Context, c conn, projectID, endpointID, id int64) (agentline.WebhookDelivery, error) {
	d, err := scanDelivery(c.queryRow(ctx, `SELECT `+deliveryColumns+deliveryFrom+
		`WHERE d.project_id = ? AND d.endpoint_id = ? AND d.id = ?`, projectID, endpointID, id))
	if err != nil {
		return d, notFound(err, "delivery")
	}
	d.History, err = queryAll(ctx, c, scanAttempt, `SELECT attempted_at, status_code, latency_ms, response, error
		FROM webhook_attempts WHERE delivery_id = ? ORDER BY id`, id)
	return d, err
}

// PendingDelivery returns a delivery (by its id alone, for the delivery
// worker) with the event's body, and its endpoint.
func (db *DB) PendingDelivery(ctx context.Context, id int64) (agentline.WebhookDelivery, agentline.WebhookEndpoint, error) {
	var body string
	var ep agentline.WebhookEndpoint
	d, err := scanDelivery(withBody{db.reader().queryRow(ctx, `SELECT `+deliveryColumns+`, v.body`+deliveryFrom+`WHERE d.id = ?`, id), &body})
	if err != nil {
		return d, ep, notFound(err, "delivery")
	}
	d.Body = []byte(body)
	ep, err = scanWebhook(db.reader().queryRow(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints WHERE id = ?`, d.EndpointID))
	return d, ep, notFound(err, "webhook endpoint")
}

// EarlierPending reports whether the endpoint has a pending delivery of the
// same subject older than delivery id: events of one subject are delivered
// in order, so that one goes first.
func (db *DB) EarlierPending(ctx context.Context, endpointID int64, subject string, id int64) (bool, error) {
	if subject == "" {
		return false, nil
	}
	var n int
	err := db.reader().queryRow(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND subject = ? AND status = ? AND id < ?`,
		endpointID, subject, agentline.DeliveryPending, id).Scan(&n)
	return n > 0, err
}

// RecordAttempt stores one attempt of a delivery and the delivery's new
// status; a delivered one clears its endpoint's failing_since, any other
// sets it if unset.
func (db *DB) RecordAttempt(ctx context.Context, deliveryID int64, a agentline.WebhookAttempt, status string) error {
	return db.tx(ctx, func(c conn) error {
		var endpointID int64
		if err := c.queryRow(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = ?, status = ?, updated_at = ?
			WHERE id = ? RETURNING endpoint_id`, a.StatusCode, status, db.now(), deliveryID).Scan(&endpointID); err != nil {
			return notFound(err, "delivery")
		}
		if _, err := c.exec(ctx, `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, response, error)
			VALUES (?, ?, ?, ?, ?, ?)`, deliveryID, a.At.UTC(), a.StatusCode, a.LatencyMS, a.Response, a.Error); err != nil {
			return err
		}
		var err error
		if status == agentline.DeliveryDelivered {
			_, err = c.exec(ctx, `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ?`, endpointID)
		} else {
			_, err = c.exec(ctx, `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ?) WHERE id = ?`, a.At.UTC(), endpointID)
		}
		if err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		return nil
	})
}

// withBody scans one more column, the event's body, after the others.
type withBody struct {
	r    interface{ Scan(...any) error }
	body *string
}

func (w withBody) Scan(dest ...any) error { return w.r.Scan(append(dest, w.body)...) }
