-- +goose Up
-- Pruning of event webhooks (the recurring prune_webhooks job): finished
-- deliveries by age, the events no delivery refers to, and the deliveries of
-- an event (also what deleting an event cascades through).
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries(updated_at) WHERE status <> 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
CREATE INDEX webhook_events_created ON webhook_events(created_at);

-- +goose Down
DROP INDEX webhook_events_created;
DROP INDEX webhook_deliveries_event;
DROP INDEX webhook_deliveries_finished;
