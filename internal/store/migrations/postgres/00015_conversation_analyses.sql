-- +goose Up
-- Post-conversation analysis (issue 18): one row per conversation that
-- ended while its agent asked for analysis, written pending in the same
-- transaction as the end (with its job), then done, failed or skipped by
-- the job. conversation_id is the conversation's id: a session id
-- (ses_...) or call_<call id>; the row goes with its conversation
-- (DeleteConversation) or its project.
CREATE TABLE conversation_analyses (
    conversation_id TEXT PRIMARY KEY,
    project_id      BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id        BIGINT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending',
    summary         TEXT NOT NULL DEFAULT '',
    success         BOOLEAN,
    success_reason  TEXT NOT NULL DEFAULT '',
    data            TEXT,
    model           TEXT NOT NULL DEFAULT '',
    error           TEXT NOT NULL DEFAULT '',
    attempts        INTEGER NOT NULL DEFAULT 0,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    finished_at     TIMESTAMPTZ
);
CREATE INDEX conversation_analyses_project ON conversation_analyses(project_id, status);

-- +goose Down
DROP TABLE conversation_analyses;
