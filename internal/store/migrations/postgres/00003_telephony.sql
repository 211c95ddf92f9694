-- +goose Up
CREATE TABLE phone_numbers (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id   BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id     BIGINT REFERENCES agents(id) ON DELETE SET NULL,
    phone_number TEXT NOT NULL UNIQUE,
    status       TEXT NOT NULL CHECK (status IN ('active', 'unassigned', 'suspended')),
    carrier_sid  TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    CHECK (agent_id IS NOT NULL OR status = 'unassigned')
);
CREATE INDEX phone_numbers_project ON phone_numbers(project_id);
-- One number per agent.
CREATE UNIQUE INDEX phone_numbers_agent ON phone_numbers(agent_id) WHERE agent_id IS NOT NULL;

-- Deleting an agent unassigns its number instead of leaving it pointing
-- nowhere: the number stays owned (and billed) until it is released.
-- +goose StatementBegin
CREATE FUNCTION phone_numbers_unassign() RETURNS trigger AS $$
BEGIN
    UPDATE phone_numbers SET agent_id = NULL, status = 'unassigned', updated_at = now()
    WHERE agent_id = OLD.id;
    RETURN OLD;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER phone_numbers_unassign_on_agent_delete BEFORE DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION phone_numbers_unassign();

CREATE TABLE calls (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id   BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id     BIGINT NOT NULL,
    number_id    BIGINT REFERENCES phone_numbers(id) ON DELETE SET NULL,
    call_sid     TEXT NOT NULL UNIQUE,
    direction    TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    from_number  TEXT NOT NULL,
    to_number    TEXT NOT NULL,
    status       TEXT NOT NULL,
    stream_ref   TEXT NOT NULL DEFAULT '',
    started_at   TIMESTAMPTZ,
    ended_at     TIMESTAMPTZ,
    duration_s   INTEGER,
    end_reason   TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX calls_project ON calls(project_id, id);
CREATE INDEX calls_agent ON calls(agent_id, id);
CREATE INDEX calls_stream_ref ON calls(stream_ref) WHERE stream_ref <> '';

-- +goose Down
DROP TABLE calls;
DROP TRIGGER phone_numbers_unassign_on_agent_delete ON agents;
DROP FUNCTION phone_numbers_unassign();
DROP TABLE phone_numbers;
