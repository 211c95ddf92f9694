package testrun

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// runInput starts a run: of the agent's version (absent: its latest,
// draft or not) and of the scenarios named (absent or empty: all of them).
type runInput struct {
	Version     *int    `json:"version"`
	ScenarioIDs []int64 `json:"scenario_ids"`
}

const maxRunScenarios = 100

func (h *Handler) createRun(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in runInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.Version != nil && *in.Version < 1 {
		return agentline.Invalid("version", "version must be a positive version number")
	}
	if len(in.ScenarioIDs) > maxRunScenarios {
		return agentline.Invalid("scenario_ids", "a run plays at most %d scenarios", maxRunScenarios)
	}
	// The run is pinned to a version, so that a save while it plays (or a
	// scenario played again after a restart) does not change what it tests.
	n := 0
	if in.Version != nil {
		n = *in.Version
	}
	agent, err := h.store.AgentAtVersion(r.Context(), projectID, agentID, n)
	if err != nil {
		return err
	}
	version := in.Version
	if agent.Running > 0 {
		version = &agent.Running
	}
	run, err := h.store.CreateTestRun(r.Context(), projectID, agentID, version, in.ScenarioIDs)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, run)
	return nil
}

func (h *Handler) listRuns(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermView)
	if err != nil {
		return err
	}
	limit, after, err := listing.IntPage(r.URL.Query())
	if err != nil {
		return err
	}
	list, err := h.store.TestRuns(r.Context(), projectID, agentID, after, limit+1)
	if err != nil {
		return err
	}
	list, next := listing.Next(list, limit, func(t agentline.TestRun) listing.Cursor { return listing.After(t.ID) })
	if list == nil {
		list = []agentline.TestRun{}
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		TestRuns   []agentline.TestRun `json:"test_runs"`
		NextCursor *string             `json:"next_cursor"`
	}{list, next})
	return nil
}

func (h *Handler) getRun(w http.ResponseWriter, r *http.Request) error {
	id, projectID, err := h.auth.AuthorizePath(r, "run_id", agentline.KindTestRun, agentline.PermView)
	if err != nil {
		return err
	}
	run, err := h.store.TestRun(r.Context(), projectID, id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, run)
	return nil
}
