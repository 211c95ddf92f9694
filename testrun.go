package agentline

import "time"

// TestScenario is a scripted situation an agent is tested in: a simulated
// person with a persona and a goal talks to the agent for at most MaxTurns
// turns, and the transcript is judged against SuccessCriteria.
type TestScenario struct {
	ID              int64             `json:"id"`
	ProjectID       int64             `json:"project_id"`
	AgentID         int64             `json:"agent_id"`
	Name            string            `json:"name"`
	Persona         string            `json:"persona"`
	Goal            string            `json:"goal"`
	SuccessCriteria string            `json:"success_criteria"`
	MaxTurns        int               `json:"max_turns"`
	Variables       map[string]string `json:"variables"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

// The statuses of a test run and of each of its scenario results.
const (
	TestRunRunning   = "running"
	TestRunCompleted = "completed"

	TestResultPending = "pending"
	TestResultPassed  = "passed"
	TestResultFailed  = "failed"
	TestResultError   = "error"
)

// TestRun is one run of some of an agent's scenarios against one version
// of its settings (nil: the agent's current settings).
type TestRun struct {
	ID         int64        `json:"id"`
	ProjectID  int64        `json:"project_id"`
	AgentID    int64        `json:"agent_id"`
	Version    *int         `json:"version"`
	Status     string       `json:"status"`
	Passed     int          `json:"passed"`
	Failed     int          `json:"failed"`
	Errors     int          `json:"errors"`
	CreatedAt  time.Time    `json:"created_at"`
	FinishedAt *time.Time   `json:"finished_at"`
	Results    []TestResult `json:"results,omitempty"`
	// Comparison sets each result beside the same scenario's result in the
	// previous completed run of the agent that played it.
	Comparison *TestComparison `json:"comparison,omitempty"`
}

// TestResult is the outcome of one scenario in a run. Passed is nil while
// the scenario plays and when it could not be played (Status "error").
type TestResult struct {
	ID           int64      `json:"id"`
	RunID        int64      `json:"run_id"`
	ScenarioID   int64      `json:"scenario_id"`
	ScenarioName string     `json:"scenario_name"`
	Status       string     `json:"status"`
	Passed       *bool      `json:"passed"`
	Reason       string     `json:"reason"`
	Transcript   []Line     `json:"transcript"`
	Turns        int        `json:"turns"`
	ToolCalls    []ToolUse  `json:"tool_calls"`
	TurnMS       []int64    `json:"turn_ms"`
	FinishedAt   *time.Time `json:"finished_at"`
	Attempts     int        `json:"attempts"`
}

// TestComparison compares a run with the previous completed run of the
// same agent that played any of its scenarios.
type TestComparison struct {
	PreviousRunID int64              `json:"previous_run_id"`
	Scenarios     []TestScenarioDiff `json:"scenarios"`
}

// TestScenarioDiff is one scenario's status in this run and the previous
// one ("" when the previous run did not play it); Changed says they differ.
type TestScenarioDiff struct {
	ScenarioID int64  `json:"scenario_id"`
	Name       string `json:"name"`
	Previous   string `json:"previous"`
	Current    string `json:"current"`
	Changed    bool   `json:"changed"`
}

// PlayTestScenario is the durable job that plays one scenario of a test
// run and judges it. It is enqueued with the run; a job cut short (a
// restart) plays its scenario again from the start.
type PlayTestScenario struct {
	ProjectID int64 `json:"project_id"`
	RunID     int64 `json:"run_id"`
	ResultID  int64 `json:"result_id"`
}

// Kind names PlayTestScenario's worker.
func (PlayTestScenario) Kind() string { return "play_test_scenario" }

// TestPlay is what the worker of a PlayTestScenario job loads: the run,
// the copy of the scenario the result plays, the result's status and how
// many attempts have started.
type TestPlay struct {
	Run      TestRun
	Scenario TestScenario
	Status   string
	Attempts int
}

// TestRunEventData is the data of a test_run.completed event.
type TestRunEventData struct {
	RunID      int64      `json:"run_id"`
	AgentID    int64      `json:"agent_id"`
	Version    *int       `json:"version"`
	Passed     int        `json:"passed"`
	Failed     int        `json:"failed"`
	Errors     int        `json:"errors"`
	FinishedAt *time.Time `json:"finished_at"`
}
