-- +goose Up
-- A project's own account with a provider kind: its base URL and API key,
-- which its agents use instead of the deployment's OPENAI_* or GEMINI_*
-- settings. The key is sealed (AES-GCM under AGENTLINE_ENCRYPTION_KEY,
-- "v1:<key id>:<data>"); only its last four characters are kept in clear.
CREATE TABLE provider_accounts (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('openai', 'gemini')),
    base_url   TEXT NOT NULL,
    sealed_key TEXT NOT NULL,
    key_last4  TEXT NOT NULL,
    updated_at DATETIME NOT NULL,
    UNIQUE (project_id, kind)
);

-- +goose Down
DROP TABLE provider_accounts;
