-- +goose Up
CREATE TABLE channels (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id   INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    type       TEXT NOT NULL CHECK (type IN ('voice_widget', 'form')),
    name       TEXT NOT NULL,
    settings   TEXT NOT NULL DEFAULT '{}',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX channels_project ON channels(project_id);
CREATE INDEX channels_agent ON channels(agent_id);

-- One key per channel; revoking deletes the row, rotating replaces the hash.
CREATE TABLE widget_keys (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id            INTEGER NOT NULL UNIQUE REFERENCES channels(id) ON DELETE CASCADE,
    project_id            INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key_hash              TEXT NOT NULL UNIQUE,
    prefix                TEXT NOT NULL,
    allowed_origins       TEXT NOT NULL DEFAULT '[]',
    rate_limit_per_minute INTEGER NOT NULL,
    rate_limit_per_day    INTEGER,
    created_at            DATETIME NOT NULL,
    last_used_at          DATETIME
);
CREATE INDEX widget_keys_project ON widget_keys(project_id);

-- Sessions outlive their channel and agent: they are the history.
CREATE TABLE widget_sessions (
    id          TEXT PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id  INTEGER NOT NULL,
    agent_id    INTEGER NOT NULL,
    origin      TEXT NOT NULL DEFAULT '',
    provider    TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',
    started_at  DATETIME NOT NULL,
    ended_at    DATETIME,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    tool_calls  INTEGER NOT NULL DEFAULT 0,
    errors      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX widget_sessions_project_started ON widget_sessions(project_id, started_at);

CREATE TABLE session_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES widget_sessions(id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    at         DATETIME NOT NULL,
    data       TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX session_events_session ON session_events(session_id, id);

-- +goose Down
DROP TABLE session_events;
DROP TABLE widget_sessions;
DROP TABLE widget_keys;
DROP TABLE channels;
