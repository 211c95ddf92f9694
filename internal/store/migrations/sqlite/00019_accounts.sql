-- +goose Up
-- Accounts belong to their holders and to the instance's administrators
-- (issue 26): an admin flag and a disabled mark on users, the first account
-- an admin; password resets are links of an account, no longer of a
-- project, so the project-scoped reset links go.
ALTER TABLE users ADD COLUMN is_admin BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE users ADD COLUMN disabled_at DATETIME;
UPDATE users SET is_admin = TRUE WHERE id = (SELECT min(id) FROM users);
DELETE FROM invites WHERE kind = 'reset';

-- Single-use links that set an account's password: the token kept only as
-- its SHA-256 hash. created_by is the admin who made it, or NULL when the
-- holder asked by email or an operator used the command line.
CREATE TABLE password_resets (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    created_by INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    used_at    DATETIME
);
CREATE INDEX password_resets_user ON password_resets(user_id);

-- +goose Down
DROP TABLE password_resets;
ALTER TABLE users DROP COLUMN disabled_at;
ALTER TABLE users DROP COLUMN is_admin;
