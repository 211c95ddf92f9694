-- +goose Up
-- A form channel's submissions. Like sessions, leads outlive their channel
-- and agent: they are the history. A live chat lead has the widget session
-- created for it.
CREATE TABLE leads (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id INTEGER NOT NULL,
    mode       TEXT NOT NULL,
    answers    TEXT NOT NULL DEFAULT '{}',
    session_id TEXT UNIQUE REFERENCES widget_sessions(id) ON DELETE SET NULL,
    agent_id   INTEGER,
    created_at DATETIME NOT NULL
);
CREATE INDEX leads_project_created ON leads(project_id, created_at);

-- +goose Down
DROP TABLE leads;
