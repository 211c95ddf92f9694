-- +goose Up
CREATE TABLE phone_numbers (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id   INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id     INTEGER REFERENCES agents(id) ON DELETE SET NULL,
    phone_number TEXT NOT NULL UNIQUE,
    status       TEXT NOT NULL CHECK (status IN ('active', 'unassigned', 'suspended')),
    carrier_sid  TEXT NOT NULL,
    created_at   DATETIME NOT NULL,
    updated_at   DATETIME NOT NULL,
    CHECK (agent_id IS NOT NULL OR status = 'unassigned')
);
CREATE INDEX phone_numbers_project ON phone_numbers(project_id);
-- One number per agent.
CREATE UNIQUE INDEX phone_numbers_agent ON phone_numbers(agent_id) WHERE agent_id IS NOT NULL;

-- Deleting an agent unassigns its number instead of leaving it pointing
-- nowhere: the number stays owned (and billed) until it is released.
-- +goose StatementBegin
CREATE TRIGGER phone_numbers_unassign_on_agent_delete BEFORE DELETE ON agents
BEGIN
    UPDATE phone_numbers SET agent_id = NULL, status = 'unassigned', updated_at = CURRENT_TIMESTAMP
    WHERE agent_id = OLD.id;
END;
-- +goose StatementEnd

CREATE TABLE calls (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id   INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id     INTEGER NOT NULL,
    number_id    INTEGER REFERENCES phone_numbers(id) ON DELETE SET NULL,
    call_sid     TEXT NOT NULL UNIQUE,
    direction    TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    from_number  TEXT NOT NULL,
    to_number    TEXT NOT NULL,
    status       TEXT NOT NULL,
    stream_ref   TEXT NOT NULL DEFAULT '',
    started_at   DATETIME,
    ended_at     DATETIME,
    duration_s   INTEGER,
    end_reason   TEXT NOT NULL DEFAULT '',
    created_at   DATETIME NOT NULL,
    updated_at   DATETIME NOT NULL
);
CREATE INDEX calls_project ON calls(project_id, id);
CREATE INDEX calls_agent ON calls(agent_id, id);
CREATE INDEX calls_stream_ref ON calls(stream_ref) WHERE stream_ref <> '';

-- +goose Down
DROP TABLE calls;
DROP TRIGGER phone_numbers_unassign_on_agent_delete;
DROP TABLE phone_numbers;
