-- +goose Up
-- A phone call's analysis waits for the call's log when the call ends
-- before its relay has written the last lines (the carrier's final status
-- often comes first): awaits_log_since is when it began to wait, NULL when
-- it does not. The relay's end record ends the wait; the conversation
-- sweep gives a job to those that waited too long.
ALTER TABLE conversation_analyses ADD COLUMN awaits_log_since DATETIME;
CREATE INDEX conversation_analyses_awaiting ON conversation_analyses(awaits_log_since) WHERE awaits_log_since IS NOT NULL;

-- +goose Down
DROP INDEX conversation_analyses_awaiting;
ALTER TABLE conversation_analyses DROP COLUMN awaits_log_since;
