-- +goose Up
-- Phone call recordings (issue 18): one per call, kept in the recordings
-- store (a directory or an S3-compatible bucket) under key. A pending one
-- waits in the local spool file for its upload job; retention marks
-- deleted the ones it removed from the store.
CREATE TABLE recordings (
    call_id     BIGINT PRIMARY KEY REFERENCES calls(id) ON DELETE CASCADE,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('stored', 'pending', 'failed', 'deleted')),
    size_bytes  BIGINT NOT NULL DEFAULT 0,
    duration_ms BIGINT NOT NULL DEFAULT 0,
    spool       TEXT NOT NULL DEFAULT '',
    error       TEXT NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
-- Retention looks for a project's stored recordings by age.
CREATE INDEX recordings_age ON recordings(project_id, status, created_at);

-- +goose Down
DROP TABLE recordings;
