-- +goose Up
-- When the carrier was last asked about a call our records show live
-- (reconciliation): a call is asked about again only after
-- AGENTLINE_CALL_RECONCILE_AFTER.
ALTER TABLE calls ADD COLUMN carrier_checked_at DATETIME;
CREATE INDEX calls_live ON calls(status) WHERE status IN ('queued', 'initiated', 'ringing', 'in-progress');

-- +goose Down
DROP INDEX calls_live;
ALTER TABLE calls DROP COLUMN carrier_checked_at;
