-- +goose Up
-- Outbound calling campaigns: a campaign of an agent, its contacts, one
-- row per dial attempt, and the project's do-not-call list.
--
-- Deleting an agent deletes its campaigns with their contacts and dials
-- (the calls they made stay, as every conversation does, without the
-- link). Times are UTC.
CREATE TABLE campaigns (
    id                   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id           BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id             BIGINT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    name                 TEXT NOT NULL,
    status               TEXT NOT NULL DEFAULT 'draft'
                         CHECK (status IN ('draft', 'running', 'paused', 'completed', 'cancelled')),
    calling_window       TEXT NOT NULL,
    max_concurrent_calls INTEGER NOT NULL,
    calls_per_second     DOUBLE PRECISION NOT NULL,
    max_attempts         INTEGER NOT NULL,
    retry_after_ms       BIGINT NOT NULL,
    voicemail            TEXT NOT NULL,
    -- The dialing engine's rate limit across instances: a dial may start
    -- at next_dial_at, and advances it by 1/calls_per_second with a
    -- conditional UPDATE.
    next_dial_at         TIMESTAMPTZ NOT NULL,
    created_at           TIMESTAMPTZ NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL,
    started_at           TIMESTAMPTZ,
    finished_at          TIMESTAMPTZ
);
CREATE INDEX campaigns_project ON campaigns(project_id, id);
CREATE INDEX campaigns_agent ON campaigns(agent_id);
-- The engine looks for running campaigns only.
CREATE INDEX campaigns_running ON campaigns(status) WHERE status = 'running';

-- A contact waits as pending with next_attempt_at set (to when it was
-- added, then to when a retry is due); a contact that will not be dialed
-- again has next_attempt_at NULL. The engine's pick reads
-- (campaign_id, status = 'pending', next_attempt_at <= now).
CREATE TABLE campaign_contacts (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id     BIGINT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    project_id      BIGINT NOT NULL,
    phone_number    TEXT NOT NULL,
    timezone        TEXT NOT NULL DEFAULT '',
    variables       TEXT NOT NULL DEFAULT '{}',
    consent_source  TEXT NOT NULL DEFAULT '',
    consent_at      TIMESTAMPTZ,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'calling', 'completed', 'voicemail', 'busy', 'no_answer', 'failed',
                                      'opted_out', 'do_not_call')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ,
    last_call_id    BIGINT REFERENCES calls(id) ON DELETE SET NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    UNIQUE (campaign_id, phone_number)
);
CREATE INDEX campaign_contacts_pick ON campaign_contacts(campaign_id, status, next_attempt_at);
CREATE INDEX campaign_contacts_number ON campaign_contacts(project_id, phone_number);
CREATE INDEX campaign_contacts_last_call ON campaign_contacts(last_call_id);

-- One row per dial attempt, written before the carrier is asked to call:
-- UNIQUE (contact_id, attempt) is the guarantee of one dial per attempt,
-- across instances and restarts. It keeps the consent the dial relied on.
CREATE TABLE campaign_dials (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id    BIGINT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    contact_id     BIGINT NOT NULL REFERENCES campaign_contacts(id) ON DELETE CASCADE,
    project_id     BIGINT NOT NULL,
    attempt        INTEGER NOT NULL,
    call_id        BIGINT REFERENCES calls(id) ON DELETE SET NULL,
    dialed_at      TIMESTAMPTZ NOT NULL,
    consent_source TEXT NOT NULL DEFAULT '',
    consent_at     TIMESTAMPTZ,
    outcome        TEXT NOT NULL DEFAULT '',
    UNIQUE (contact_id, attempt)
);
CREATE INDEX campaign_dials_campaign ON campaign_dials(campaign_id, dialed_at);
CREATE INDEX campaign_dials_call ON campaign_dials(call_id);

CREATE TABLE do_not_call (
    project_id   BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    phone_number TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (project_id, phone_number)
);

-- A campaign call carries its campaign, contact and the contact's
-- variables on the conversation's record.
ALTER TABLE calls ADD COLUMN campaign_id BIGINT REFERENCES campaigns(id) ON DELETE SET NULL;
ALTER TABLE calls ADD COLUMN contact_id BIGINT REFERENCES campaign_contacts(id) ON DELETE SET NULL;
ALTER TABLE calls ADD COLUMN variables TEXT NOT NULL DEFAULT '{}';
CREATE INDEX calls_campaign ON calls(campaign_id);
CREATE INDEX calls_contact ON calls(contact_id);

-- +goose Down
DROP INDEX calls_contact;
DROP INDEX calls_campaign;
ALTER TABLE calls DROP COLUMN variables;
ALTER TABLE calls DROP COLUMN contact_id;
ALTER TABLE calls DROP COLUMN campaign_id;
DROP TABLE do_not_call;
DROP TABLE campaign_dials;
DROP TABLE campaign_contacts;
DROP TABLE campaigns;
