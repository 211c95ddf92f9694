-- +goose Up
-- API keys for automation: each acts in its one project with its role.
-- Only the SHA-256 of the key is kept (the key is 32 random bytes, so a
-- fast hash is enough) with a short prefix to tell keys apart in lists.
CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id   INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    prefix       TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,
    created_by   INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at   DATETIME NOT NULL,
    expires_at   DATETIME,
    revoked_at   DATETIME,
    last_used_at DATETIME
);
CREATE INDEX api_keys_project ON api_keys (project_id, id);

-- +goose Down
DROP TABLE api_keys;
