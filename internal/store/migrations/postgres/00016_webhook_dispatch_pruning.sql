-- +goose Up
-- Event webhooks, second part.
--
-- A delivery is written without its job (queued false): the request that
-- emits the event pays for two small inserts only, and the dispatcher gives
-- the deliveries not queued yet their jobs, many in one transaction.
-- Deliveries from before this migration had their job already.
ALTER TABLE webhook_deliveries ADD COLUMN queued BOOLEAN NOT NULL DEFAULT TRUE;
CREATE INDEX webhook_deliveries_unqueued ON webhook_deliveries(id) WHERE NOT queued;
-- Pruning (the recurring prune_webhooks job): finished deliveries by age,
-- the events no delivery refers to, and the deliveries of an event (also
-- what deleting an event cascades through).
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries(updated_at) WHERE status <> 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
CREATE INDEX webhook_events_created ON webhook_events(created_at);

-- +goose Down
DROP INDEX webhook_events_created;
DROP INDEX webhook_deliveries_event;
DROP INDEX webhook_deliveries_finished;
DROP INDEX webhook_deliveries_unqueued;
ALTER TABLE webhook_deliveries DROP COLUMN queued;
