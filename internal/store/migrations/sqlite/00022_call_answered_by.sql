-- +goose Up
-- Who answered an outbound call placed with answering machine detection,
-- as the carrier's asynchronous verdict says (human, machine_start,
-- machine_end_beep, ...); empty until it comes, and for every other call.
ALTER TABLE calls ADD COLUMN answered_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE calls DROP COLUMN answered_by;
