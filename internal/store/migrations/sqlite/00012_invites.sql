-- +goose Up
-- Invite and password-reset links: single use, expiring, the token kept
-- only as its SHA-256 hash (like auth_sessions).
CREATE TABLE invites (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('invite', 'reset')),
    email      TEXT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    token_hash TEXT NOT NULL UNIQUE,
    created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    used_at    DATETIME
);
CREATE INDEX invites_project ON invites(project_id);

-- +goose Down
DROP TABLE invites;
