-- +goose Up
-- Event webhooks (Standard Webhooks): a project's endpoints, the outbox of
-- events written in the same transaction as the change that caused them,
-- one delivery per event and endpoint (made by a durable job), and each
-- delivery's attempts. River's own tables are migrated by River.
CREATE TABLE webhook_endpoints (
    id                    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id            BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    url                   TEXT NOT NULL,
    description           TEXT NOT NULL DEFAULT '',
    events                TEXT NOT NULL DEFAULT '["*"]',
    enabled               BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason       TEXT NOT NULL DEFAULT '',
    secret                TEXT NOT NULL,
    previous_secret       TEXT NOT NULL DEFAULT '',
    previous_secret_until TIMESTAMPTZ,
    failing_since         TIMESTAMPTZ,
    created_at            TIMESTAMPTZ NOT NULL,
    updated_at            TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_endpoints_project ON webhook_endpoints(project_id);

CREATE TABLE webhook_events (
    id         TEXT PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    subject    TEXT NOT NULL DEFAULT '',
    body       TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE webhook_deliveries (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    endpoint_id BIGINT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    event_id    TEXT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
    subject     TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_status INTEGER NOT NULL DEFAULT 0,
    give_up_at  TIMESTAMPTZ NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, id);
CREATE INDEX webhook_deliveries_subject ON webhook_deliveries(endpoint_id, subject, status, id);

CREATE TABLE webhook_attempts (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id  BIGINT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempted_at TIMESTAMPTZ NOT NULL,
    status_code  INTEGER NOT NULL,
    latency_ms   BIGINT NOT NULL,
    response     TEXT NOT NULL DEFAULT '',
    error        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, id);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
