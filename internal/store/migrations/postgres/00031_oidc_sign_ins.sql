-- +goose Up
-- Single sign-ons under way, between the redirect to the provider and its
-- callback, so that the callback may reach any instance. A row is keyed by
-- the hash of its state and holds the hash of the browser's binding cookie:
-- no secret (the nonce and PKCE verifier are derived from the cookie, which
-- only the browser holds). The callback deletes its row (one use); rows
-- left behind are pruned some time after they expire.
CREATE TABLE oidc_sign_ins (
    state_hash   TEXT PRIMARY KEY,
    binding_hash TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX oidc_sign_ins_expires ON oidc_sign_ins(expires_at);

-- +goose Down
DROP TABLE oidc_sign_ins;
