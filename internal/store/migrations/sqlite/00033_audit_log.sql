-- +goose Up
-- The append-only audit log: who changed what, when and from where. Rows
-- are written in the transaction of the change they record and never
-- updated; only the retention prune deletes them. project_id and actor_id
-- carry no foreign key, so the record of a deleted project, user or key
-- stays. project_id is NULL for instance-level actions (sign-ins,
-- instance administration).
CREATE TABLE audit_log (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at            DATETIME NOT NULL,
    project_id    INTEGER,
    actor_kind    TEXT NOT NULL CHECK (actor_kind IN ('user', 'api_key', 'system')),
    actor_id      INTEGER NOT NULL DEFAULT 0,
    actor_label   TEXT NOT NULL DEFAULT '',
    action        TEXT NOT NULL,
    resource_kind TEXT NOT NULL,
    resource_id   TEXT NOT NULL DEFAULT '',
    changes       TEXT NOT NULL DEFAULT '',
    client_ip     TEXT NOT NULL DEFAULT '',
    request_id    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_project ON audit_log (project_id, id);
CREATE INDEX audit_log_instance ON audit_log (id) WHERE project_id IS NULL;
CREATE INDEX audit_log_at ON audit_log (at);

-- +goose Down
DROP TABLE audit_log;
