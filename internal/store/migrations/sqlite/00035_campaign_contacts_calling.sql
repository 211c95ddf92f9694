-- +goose Up
-- The campaign sweep runs only while there is something to sweep: a
-- running campaign, or a contact still calling (on a dial of a paused or
-- cancelled campaign that recovery may have to settle). This index makes
-- the second question one probe (as campaigns_running does the first).
CREATE INDEX campaign_contacts_calling ON campaign_contacts(status) WHERE status = 'calling';

-- +goose Down
DROP INDEX campaign_contacts_calling;
