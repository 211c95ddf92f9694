-- +goose Up
CREATE TABLE agent_tools (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    parameters  TEXT NOT NULL,
    url         TEXT NOT NULL,
    method      TEXT NOT NULL,
    headers     TEXT NOT NULL DEFAULT '{}',
    timeout_ms  INTEGER NOT NULL,
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL,
    UNIQUE (agent_id, name)
);
CREATE INDEX agent_tools_project ON agent_tools(project_id);

CREATE TABLE knowledge_documents (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id   INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id     INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    title        TEXT NOT NULL,
    content_type TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    chunks       INTEGER NOT NULL,
    created_at   DATETIME NOT NULL
);
CREATE INDEX knowledge_documents_agent ON knowledge_documents(agent_id);
CREATE INDEX knowledge_documents_project ON knowledge_documents(project_id);

-- project_id and agent_id are copies of the document's, so a search filters
-- without a join. scope is the token "agent<agent_id>": indexed with the
-- text, it lets the full-text query itself keep to one agent's chunks.
CREATE TABLE knowledge_chunks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id INTEGER NOT NULL REFERENCES knowledge_documents(id) ON DELETE CASCADE,
    project_id  INTEGER NOT NULL,
    agent_id    INTEGER NOT NULL,
    scope       TEXT NOT NULL,
    position    INTEGER NOT NULL,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL
);
CREATE INDEX knowledge_chunks_document ON knowledge_chunks(document_id);

-- The full-text index reads its text from knowledge_chunks (external
-- content); the triggers keep it in step, cascading deletes included.
CREATE VIRTUAL TABLE knowledge_fts USING fts5(
    scope, title, body,
    content='knowledge_chunks', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);

-- +goose StatementBegin
CREATE TRIGGER knowledge_chunks_ai AFTER INSERT ON knowledge_chunks BEGIN
    INSERT INTO knowledge_fts(rowid, scope, title, body) VALUES (new.id, new.scope, new.title, new.body);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER knowledge_chunks_ad AFTER DELETE ON knowledge_chunks BEGIN
    INSERT INTO knowledge_fts(knowledge_fts, rowid, scope, title, body) VALUES ('delete', old.id, old.scope, old.title, old.body);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER knowledge_chunks_ad;
DROP TRIGGER knowledge_chunks_ai;
DROP TABLE knowledge_fts;
DROP TABLE knowledge_chunks;
DROP TABLE knowledge_documents;
DROP TABLE agent_tools;
