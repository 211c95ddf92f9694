-- +goose Up
CREATE TABLE agent_tools (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id    BIGINT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    parameters  TEXT NOT NULL,
    url         TEXT NOT NULL,
    method      TEXT NOT NULL,
    headers     TEXT NOT NULL DEFAULT '{}',
    timeout_ms  INTEGER NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (agent_id, name)
);
CREATE INDEX agent_tools_project ON agent_tools(project_id);

CREATE TABLE knowledge_documents (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id   BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id     BIGINT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    content_type TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    chunks       INTEGER NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX knowledge_documents_agent ON knowledge_documents(agent_id);
CREATE INDEX knowledge_documents_project ON knowledge_documents(project_id);

-- project_id and agent_id are copies of the document's, so a search filters
-- without a join. language is the text search configuration the chunk was
-- indexed with (from the agent's language). tsv holds title and body and is
-- what the GIN index finds; title_tsv tells the ranking a word is in the title,
-- lexemes is the chunk's length for it, kept apart so ranking never reads tsv.
CREATE TABLE knowledge_chunks (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id BIGINT NOT NULL REFERENCES knowledge_documents(id) ON DELETE CASCADE,
    project_id  BIGINT NOT NULL,
    agent_id    BIGINT NOT NULL,
    position    INTEGER NOT NULL,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL,
    language    regconfig NOT NULL DEFAULT 'simple',
    tsv         tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector(language, title), 'A') || setweight(to_tsvector(language, body), 'B')
                ) STORED,
    title_tsv   tsvector GENERATED ALWAYS AS (to_tsvector(language, title)) STORED,
    lexemes     integer GENERATED ALWAYS AS (length(to_tsvector(language, title || ' ' || body))) STORED
);
CREATE INDEX knowledge_chunks_document ON knowledge_chunks(document_id);
CREATE INDEX knowledge_chunks_agent ON knowledge_chunks(agent_id);
CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING GIN (tsv);

-- +goose Down
DROP TABLE knowledge_chunks;
DROP TABLE knowledge_documents;
DROP TABLE agent_tools;
