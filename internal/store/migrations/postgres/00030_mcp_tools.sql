-- +goose Up
-- A tool is a webhook or an MCP server. An MCP server's headers (tokens)
-- are kept sealed in sealed_headers, never in the clear headers column;
-- allowed_tools is a JSON array of the server's tool names to offer (empty:
-- all of them).
ALTER TABLE agent_tools ADD COLUMN type TEXT NOT NULL DEFAULT 'webhook';
ALTER TABLE agent_tools ADD COLUMN allowed_tools TEXT NOT NULL DEFAULT '[]';
ALTER TABLE agent_tools ADD COLUMN sealed_headers TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agent_tools DROP COLUMN sealed_headers;
ALTER TABLE agent_tools DROP COLUMN allowed_tools;
ALTER TABLE agent_tools DROP COLUMN type;
