package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// Enqueuer inserts durable jobs inside a store transaction: the job queue's
// InsertManyTx on tx. The store calls it; the job queue provides it.
type Enqueuer func(ctx context.Context, tx *sql.Tx, jobs []agentline.Job) error

// OutboxOptions connects the store's outbox to the job queue.
type OutboxOptions struct {
	Enqueue Enqueuer
	// DeliverySpan is how long a webhook delivery is retried (default 72 h).
	DeliverySpan time.Duration
}

// SetOutbox connects the outbox to the job queue; call it before serving.
// Without it, a write that would enqueue a job fails.
func (db *DB) SetOutbox(o OutboxOptions) {
	if o.DeliverySpan <= 0 {
		o.DeliverySpan = 72 * time.Hour
	}
	db.outbox = o
}

// JobPool is the connection pool the job queue works on. On SQLite it is
// the single write connection: River's own writes then queue behind the
// store's (and the reverse) instead of failing with "database is locked",
// as riversqlite's documentation advises (one open connection). River holds
// no connection between its statements, so store writes made by job
// workers do not wait on it for long.
func (db *DB) JobPool() *sql.DB { return db.write }

// MigrationLock runs fn while holding, on PostgreSQL, a session advisory
// lock, so instances starting together migrate the job queue's schema one
// after the other (River migrates each version in a transaction of its own).
// On SQLite it just runs fn.
func (db *DB) MigrationLock(ctx context.Context, fn func(ctx context.Context) error) error {
	if db.dialect != Postgres {
		return fn(ctx)
	}
	c, err := db.write.Conn(ctx)
	if err != nil {
		return fmt.Errorf("job queue migration lock: %w", classify(err))
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock(7245091338)`); err != nil {
		return fmt.Errorf("job queue migration lock: %w", classify(err))
	}
	defer c.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(7245091338)`)
	return fn(ctx)
}

// The statements of Emit, prepared after migrating (see prepareHot).
const (
	selectEnabledWebhooks = `SELECT ` + webhookColumns + ` FROM webhook_endpoints WHERE project_id = ? AND enabled ORDER BY id`
	insertWebhookEvent    = `INSERT INTO webhook_events (id, project_id, type, subject, body, created_at) VALUES (?, ?, ?, ?, ?, ?)`
	insertWebhookDelivery = `INSERT INTO webhook_deliveries (project_id, endpoint_id, event_id, subject, status, give_up_at, created_at, updated_at, queued)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, FALSE) RETURNING id`
)

// outbox is agentline.Outbox on one write transaction.
type outbox struct {
	db *DB
	c  conn
}

func (db *DB) outboxOn(c conn) *outbox { return &outbox{db: db, c: c} }

// Enqueue inserts jobs in the transaction.
func (o *outbox) Enqueue(ctx context.Context, jobs ...agentline.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	if o.db.outbox.Enqueue == nil {
		return errors.New("enqueue: no job queue is connected to the store")
	}
	tx, ok := o.c.q.(*sql.Tx)
	if !ok {
		return errors.New("enqueue: not in a transaction")
	}
	if err := o.db.outbox.Enqueue(ctx, tx, jobs); err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	return nil
}

// Emit stores e and a delivery for each enabled endpoint of its project
// that wants its type, each with its job. An event nobody wants is not
// stored.
func (o *outbox) Emit(ctx context.Context, e agentline.Event) error {
	ids, err := o.subscribers(ctx, e.ProjectID, e.Type)
	if err != nil || len(ids) == 0 {
		return err
	}
	_, err = o.emitTo(ctx, e, ids...)
	return err
}

// subscribers lists the project's enabled endpoints that want events of
// type typ. Callers that must load what an event carries ask first, so
// that a project without endpoints pays one query for its events.
func (o *outbox) subscribers(ctx context.Context, projectID int64, typ string) ([]int64, error) {
	eps, err := o.endpoints(ctx, projectID)
	if err != nil {
		return nil, fmt.Errorf("emit %s: %w", typ, err)
	}
	return wanting(eps, typ), nil
}

// endpoints lists the project's enabled endpoints (from the endpoint
// cache, on SQLite).
func (o *outbox) endpoints(ctx context.Context, projectID int64) ([]agentline.WebhookEndpoint, error) {
	cache := o.db.endpointCache
	var gen uint64
	if cache != nil {
		eps, g, ok := cache.get(projectID)
		if ok {
			return eps, nil
		}
		gen = g
	}
	rows, err := o.c.queryPrepared(ctx, selectEnabledWebhooks, projectID)
	if err != nil {
		return nil, err
	}
	eps, err := scanAll(rows, scanWebhook)
	if err == nil && cache != nil {
		cache.put(projectID, eps, gen)
	}
	return eps, err
}

// wanting picks the ids of the endpoints that want events of type typ.
func wanting(eps []agentline.WebhookEndpoint, typ string) []int64 {
	var ids []int64
	for _, ep := range eps {
		if typ != "" && ep.Wants(typ) {
			ids = append(ids, ep.ID)
		}
	}
	return ids
}

// emitTo stores e and one delivery to each endpoint, without its job: a
// DispatchWebhooks job gives it one after the transaction commits
// (DispatchDeliveries, beforeCommit).
func (o *outbox) emitTo(ctx context.Context, e agentline.Event, endpointIDs ...int64) ([]int64, error) {
	body, err := e.Body()
	if err != nil {
		return nil, err
	}
	now := o.db.now()
	if _, err := o.c.execPrepared(ctx, insertWebhookEvent,
		e.ID, e.ProjectID, e.Type, e.Subject, string(body), now); err != nil {
		return nil, fmt.Errorf("emit %s: %w", e.Type, err)
	}
	ids := make([]int64, 0, len(endpointIDs))
	for _, ep := range endpointIDs {
		var id int64
		err := o.c.queryRowPrepared(ctx, insertWebhookDelivery, e.ProjectID, ep, e.ID, e.Subject, agentline.DeliveryPending,
			now.Add(o.db.outbox.DeliverySpan), now, now).Scan(&id)
		if err != nil {
			return nil, fmt.Errorf("emit %s: %w", e.Type, err)
		}
		ids = append(ids, id)
		o.c.tx.storedDelivery(id)
	}
	return ids, nil
}

// WithOutbox runs fn in a write transaction of its own with an outbox on
// it: for events that follow no other store write of the caller.
func (db *DB) WithOutbox(ctx context.Context, fn func(ctx context.Context, out agentline.Outbox) error) error {
	return db.tx(ctx, func(c conn) error { return fn(ctx, db.outboxOn(c)) })
}

// Emit stores one event and its deliveries in a transaction of its own.
func (db *DB) Emit(ctx context.Context, e agentline.Event) error {
	return db.WithOutbox(ctx, func(ctx context.Context, out agentline.Outbox) error { return out.Emit(ctx, e) })
}

// SendTestEvent stores e and one delivery of it to the project's endpoint
// id (enabled or not), with its job, and returns the delivery.
func (db *DB) SendTestEvent(ctx context.Context, projectID, endpointID int64, e agentline.Event) (agentline.WebhookDelivery, error) {
	var id int64
	err := db.tx(ctx, func(c conn) error {
		if err := c.queryRow(ctx, `SELECT id FROM webhook_endpoints WHERE project_id = ? AND id = ?`, projectID, endpointID).Scan(&id); err != nil {
			return notFound(err, "webhook endpoint")
		}
		ids, err := db.outboxOn(c).emitTo(ctx, e, endpointID)
		if err != nil {
			return err
		}
		id = ids[0]
		return c.audit(ctx, change(projectID, "webhook.test", "webhook", endpointID, nil))
	})
	if err != nil {
		return agentline.WebhookDelivery{}, err
	}
	return db.WebhookDelivery(ctx, projectID, endpointID, id)
}

// RetryDelivery makes a finished delivery pending again, with a new retry
// span, and enqueues its job; a pending one is a conflict.
func (db *DB) RetryDelivery(ctx context.Context, projectID, endpointID, deliveryID int64) (agentline.WebhookDelivery, error) {
	err := db.tx(ctx, func(c conn) error {
		var status string
		err := c.queryRow(ctx, `SELECT status FROM webhook_deliveries WHERE project_id = ? AND endpoint_id = ? AND id = ?`,
			projectID, endpointID, deliveryID).Scan(&status)
		if err != nil {
			return notFound(err, "delivery")
		}
		if status == agentline.DeliveryPending {
			return agentline.Errorf(agentline.EConflict, "the delivery is still pending: it is retried on its own")
		}
		now := db.now()
		if _, err := c.exec(ctx, `UPDATE webhook_deliveries SET status = ?, give_up_at = ?, updated_at = ? WHERE id = ?`,
			agentline.DeliveryPending, now.Add(db.outbox.DeliverySpan), now, deliveryID); err != nil {
			return err
		}
		if err := c.audit(ctx, change(projectID, "webhook.delivery_retry", "webhook_delivery", deliveryID, nil)); err != nil {
			return err
		}
		return db.outboxOn(c).Enqueue(ctx, agentline.DeliverWebhook{DeliveryID: deliveryID, EndpointID: endpointID})
	})
	if err != nil {
		return agentline.WebhookDelivery{}, err
	}
	return db.WebhookDelivery(ctx, projectID, endpointID, deliveryID)
}
