-- +goose Up
CREATE TABLE channels (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id   BIGINT REFERENCES agents(id) ON DELETE SET NULL,
    type       TEXT NOT NULL CHECK (type IN ('voice_widget', 'form')),
    name       TEXT NOT NULL,
    settings   TEXT NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX channels_project ON channels(project_id);
CREATE INDEX channels_agent ON channels(agent_id);

-- One key per channel; revoking deletes the row, rotating replaces the hash.
CREATE TABLE widget_keys (
    id                    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    channel_id            BIGINT NOT NULL UNIQUE REFERENCES channels(id) ON DELETE CASCADE,
    project_id            BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key_hash              TEXT NOT NULL UNIQUE,
    prefix                TEXT NOT NULL,
    allowed_origins       TEXT NOT NULL DEFAULT '[]',
    rate_limit_per_minute BIGINT NOT NULL,
    rate_limit_per_day    BIGINT,
    created_at            TIMESTAMPTZ NOT NULL,
    last_used_at          TIMESTAMPTZ
);
CREATE INDEX widget_keys_project ON widget_keys(project_id);

-- Sessions outlive their channel and agent: they are the history.
CREATE TABLE widget_sessions (
    id          TEXT PRIMARY KEY,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id  BIGINT NOT NULL,
    agent_id    BIGINT NOT NULL,
    origin      TEXT NOT NULL DEFAULT '',
    provider    TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',
    started_at  TIMESTAMPTZ NOT NULL,
    ended_at    TIMESTAMPTZ,
    duration_ms BIGINT NOT NULL DEFAULT 0,
    tool_calls  BIGINT NOT NULL DEFAULT 0,
    errors      BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX widget_sessions_project_started ON widget_sessions(project_id, started_at);

CREATE TABLE session_events (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES widget_sessions(id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    at         TIMESTAMPTZ NOT NULL,
    data       TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX session_events_session ON session_events(session_id, id);

-- +goose Down
DROP TABLE session_events;
DROP TABLE widget_sessions;
DROP TABLE widget_keys;
DROP TABLE channels;
