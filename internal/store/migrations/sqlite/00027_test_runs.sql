-- +goose Up
-- An agent's test scenarios: a simulated person (persona, goal) who talks
-- to the agent for at most max_turns turns, judged against success_criteria.
CREATE TABLE test_scenarios (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id       INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id         INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    persona          TEXT NOT NULL,
    goal             TEXT NOT NULL,
    success_criteria TEXT NOT NULL,
    max_turns        INTEGER NOT NULL,
    variables        TEXT NOT NULL DEFAULT '{}',
    created_at       DATETIME NOT NULL,
    updated_at       DATETIME NOT NULL,
    UNIQUE (agent_id, name)
);

-- A run of some of an agent's scenarios; its counts are settled when the
-- last of its results is.
CREATE TABLE test_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    version     INTEGER,
    status      TEXT NOT NULL CHECK (status IN ('running', 'completed')),
    passed      INTEGER NOT NULL DEFAULT 0,
    failed      INTEGER NOT NULL DEFAULT 0,
    errors      INTEGER NOT NULL DEFAULT 0,
    created_at  DATETIME NOT NULL,
    finished_at DATETIME
);
CREATE INDEX test_runs_agent ON test_runs (project_id, agent_id, id);

-- One scenario of a run: a copy of the scenario as it was played (so a
-- later edit or deletion does not change a past result) and its outcome.
CREATE TABLE test_results (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id           INTEGER NOT NULL REFERENCES test_runs(id) ON DELETE CASCADE,
    project_id       INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    scenario_id      INTEGER NOT NULL,
    scenario         TEXT NOT NULL,
    scenario_name    TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'passed', 'failed', 'error')),
    reason           TEXT NOT NULL DEFAULT '',
    transcript       TEXT NOT NULL DEFAULT '[]',
    turns            INTEGER NOT NULL DEFAULT 0,
    tool_calls       TEXT NOT NULL DEFAULT '[]',
    turn_ms          TEXT NOT NULL DEFAULT '[]',
    attempts         INTEGER NOT NULL DEFAULT 0,
    finished_at      DATETIME
);
CREATE INDEX test_results_run ON test_results (run_id, id);

-- +goose Down
DROP TABLE test_results;
DROP TABLE test_runs;
DROP TABLE test_scenarios;
