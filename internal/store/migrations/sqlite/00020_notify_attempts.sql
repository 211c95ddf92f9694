-- +goose Up
-- Each try at POSTing a lead to its form's notify_url (issue 27): the
-- console shows a form channel's failing deliveries from these. They go
-- with their lead; the lead's answers are not repeated here.
CREATE TABLE notify_attempts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id   INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id   INTEGER NOT NULL,
    lead_id      INTEGER NOT NULL REFERENCES leads(id) ON DELETE CASCADE,
    attempt      INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    delivered    BOOLEAN NOT NULL,
    status_code  INTEGER NOT NULL,
    error        TEXT NOT NULL DEFAULT '',
    latency_ms   INTEGER NOT NULL,
    at           DATETIME NOT NULL
);
CREATE INDEX notify_attempts_channel ON notify_attempts(project_id, channel_id, id);
CREATE INDEX notify_attempts_lead ON notify_attempts(lead_id);

-- +goose Down
DROP TABLE notify_attempts;
