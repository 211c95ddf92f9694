-- +goose Up
-- The campaign's pace where it counts, at the carrier: a campaign call's
-- request may go out at next_send_at (NULL: at once), taken with a
-- conditional UPDATE in the transaction that reserves the call, right
-- before the request, so that the time between a dial's claim and its
-- request (which varies) cannot bunch requests together.
ALTER TABLE campaigns ADD COLUMN next_send_at DATETIME;

-- +goose Down
ALTER TABLE campaigns DROP COLUMN next_send_at;
