-- +goose Up
-- The OpenID Connect identity an account signs in with: its issuer and
-- subject, which stay when the email at the provider changes. One identity
-- holds one account, and an account has at most one.
ALTER TABLE users ADD COLUMN oidc_issuer TEXT;
ALTER TABLE users ADD COLUMN oidc_subject TEXT;
CREATE UNIQUE INDEX users_oidc_identity ON users(oidc_issuer, oidc_subject);

-- +goose Down
DROP INDEX users_oidc_identity;
ALTER TABLE users DROP COLUMN oidc_subject;
ALTER TABLE users DROP COLUMN oidc_issuer;
