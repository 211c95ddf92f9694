-- +goose Up
-- What happened during a call, in order: both sides' transcripts, tool
-- calls with their results, keypad digits and model errors.
CREATE TABLE call_events (
    id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    call_id  BIGINT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
    type     TEXT NOT NULL,
    role     TEXT NOT NULL DEFAULT '',
    text     TEXT NOT NULL DEFAULT '',
    data     JSONB,
    at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX call_events_call ON call_events(call_id, id);

-- Where an agent may transfer its phone calls (the transfer_call tool).
ALTER TABLE agents ADD COLUMN transfer_number TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agents DROP COLUMN transfer_number;
DROP TABLE call_events;
