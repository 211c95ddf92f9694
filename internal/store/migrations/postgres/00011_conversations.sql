-- +goose Up
-- Conversations (issue 18) are a read model over widget_sessions, calls and
-- leads. A widget session keeps its own life cycle here: the last time a
-- client reported anything (heartbeats included), and how it ended.
ALTER TABLE widget_sessions ADD COLUMN last_event_at TIMESTAMPTZ;
ALTER TABLE widget_sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'live';
ALTER TABLE widget_sessions ADD COLUMN end_reason TEXT NOT NULL DEFAULT '';
UPDATE widget_sessions SET status = 'ended', end_reason = 'ended' WHERE ended_at IS NOT NULL;
-- The sweeper looks for live sessions only.
CREATE INDEX widget_sessions_live ON widget_sessions(status, started_at) WHERE status = 'live';

-- +goose Down
DROP INDEX widget_sessions_live;
ALTER TABLE widget_sessions DROP COLUMN end_reason;
ALTER TABLE widget_sessions DROP COLUMN status;
ALTER TABLE widget_sessions DROP COLUMN last_event_at;
