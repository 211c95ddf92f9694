-- +goose Up
-- Agent versions: each save that changes an agent's conversational
-- settings keeps them as an immutable numbered version. The agents row
-- holds the latest (the editor's draft); version and published_version
-- number the latest and the one conversations run (0: not saved since
-- versions began, which runs the row as it is).
ALTER TABLE agents ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN published_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN review_before_publish BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE agent_versions (
    agent_id   BIGINT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    settings   TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (agent_id, version)
);

-- The version each conversation ran; null before versions began.
ALTER TABLE widget_sessions ADD COLUMN agent_version INTEGER;
ALTER TABLE calls ADD COLUMN agent_version INTEGER;

-- +goose Down
ALTER TABLE calls DROP COLUMN agent_version;
ALTER TABLE widget_sessions DROP COLUMN agent_version;
DROP TABLE agent_versions;
ALTER TABLE agents DROP COLUMN review_before_publish;
ALTER TABLE agents DROP COLUMN published_version;
ALTER TABLE agents DROP COLUMN version;
