-- +goose Up
-- Stream tokens that have admitted a media stream, by direction and ref
-- ("inbound:" and the call SID, "outbound:" and the stream ref): each admits
-- one stream, whichever instance it reaches. Rows are kept until the token
-- expires, then swept.
CREATE TABLE stream_token_uses (
    ref        TEXT PRIMARY KEY,
    expires_at DATETIME NOT NULL
);
CREATE INDEX stream_token_uses_expires ON stream_token_uses(expires_at);

-- +goose Down
DROP TABLE stream_token_uses;
