-- +goose Up
-- Until when a campaign dial's request to the carrier may still create its
-- call there, for the campaign's count of calls the carrier may create
-- within one second: the far future from the moment its send slot is
-- taken until its answer comes back (or its dial is settled), then that
-- moment. NULL: no request was sent. The index (dials with a request, by
-- campaign and request_until) lets the count read only the recent or
-- unanswered ones.
ALTER TABLE campaign_dials ADD COLUMN request_until DATETIME;
CREATE INDEX campaign_dials_request ON campaign_dials(campaign_id, request_until) WHERE request_until IS NOT NULL;

-- +goose Down
DROP INDEX campaign_dials_request;
ALTER TABLE campaign_dials DROP COLUMN request_until;
