-- +goose Up
-- Per agent: whether phone calls are recorded and what the analysis of a
-- conversation asks for (JSON: summary, success_criteria, data_schema).
-- Per project: how many days recordings are kept (0: until deleted).
ALTER TABLE agents ADD COLUMN record_calls BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE agents ADD COLUMN analysis TEXT NOT NULL DEFAULT '{"summary":true,"success_criteria":"","data_schema":null}';
ALTER TABLE projects ADD COLUMN recording_retention_days INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE projects DROP COLUMN recording_retention_days;
ALTER TABLE agents DROP COLUMN analysis;
ALTER TABLE agents DROP COLUMN record_calls;
