-- +goose Up
-- A project's live calls, counted on every reservation of a call (the
-- project's cap on live calls): with calls_project alone, that count read
-- every call the project ever made.
CREATE INDEX calls_live_project ON calls(project_id, created_at) WHERE status IN ('queued', 'initiated', 'ringing', 'in-progress');

-- +goose Down
DROP INDEX calls_live_project;
