-- +goose Up
-- Calls placed from the console's browser (direction 'test', issue 21) are
-- kept like any other call.
ALTER TABLE calls DROP CONSTRAINT calls_direction_check;
ALTER TABLE calls ADD CONSTRAINT calls_direction_check CHECK (direction IN ('inbound', 'outbound', 'test'));

-- +goose Down
DELETE FROM calls WHERE direction = 'test';
ALTER TABLE calls DROP CONSTRAINT calls_direction_check;
ALTER TABLE calls ADD CONSTRAINT calls_direction_check CHECK (direction IN ('inbound', 'outbound'));
