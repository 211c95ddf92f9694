package testrun

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// HandlerStore is what the routes of scenarios and runs need.
type HandlerStore interface {
	CreateTestScenario(ctx context.Context, s agentline.TestScenario) (agentline.TestScenario, error)
	TestScenarios(ctx context.Context, projectID, agentID int64) ([]agentline.TestScenario, error)
	TestScenario(ctx context.Context, projectID, id int64) (agentline.TestScenario, error)
	UpdateTestScenario(ctx context.Context, s agentline.TestScenario) (agentline.TestScenario, error)
	DeleteTestScenario(ctx context.Context, projectID, id int64) error
	AgentAtVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.Agent, error)
	CreateTestRun(ctx context.Context, projectID, agentID int64, version *int, scenarioIDs []int64) (agentline.TestRun, error)
	TestRun(ctx context.Context, projectID, id int64) (agentline.TestRun, error)
	TestRuns(ctx context.Context, projectID, agentID, after int64, limit int) ([]agentline.TestRun, error)
}

// Handler serves the routes of test scenarios and runs.
type Handler struct {
	store HandlerStore
	auth  *auth.Service
}

// NewHandler returns the handler of the test routes.
func NewHandler(s HandlerStore, a *auth.Service) *Handler { return &Handler{store: s, auth: a} }

// Routes lists the routes of this package, all behind a session token.
func (h *Handler) Routes() []httpx.Route {
	r := h.auth.Route
	return []httpx.Route{
		r("GET", "/api/agents/{agent_id}/scenarios", h.listScenarios),
		r("POST", "/api/agents/{agent_id}/scenarios", h.createScenario),
		r("GET", "/api/scenarios/{scenario_id}", h.getScenario),
		r("PATCH", "/api/scenarios/{scenario_id}", h.updateScenario),
		r("DELETE", "/api/scenarios/{scenario_id}", h.deleteScenario),

		r("GET", "/api/agents/{agent_id}/test-runs", h.listRuns),
		r("POST", "/api/agents/{agent_id}/test-runs", h.createRun),
		r("GET", "/api/test-runs/{run_id}", h.getRun),
	}
}

// scenarioInput is the writable part of a scenario; nil fields keep their
// value.
type scenarioInput struct {
	Name            *string            `json:"name"`
	Persona         *string            `json:"persona"`
	Goal            *string            `json:"goal"`
	SuccessCriteria *string            `json:"success_criteria"`
	MaxTurns        *int               `json:"max_turns"`
	Variables       *map[string]string `json:"variables"`
}

// Limits of a scenario.
const (
	MaxTurns    = 30
	maxText     = 4000
	maxVars     = 50
	defaultTurn = 6
)

var (
	scenarioName = regexp.MustCompile(`^[\pL\pN _.-]{1,100}$`)
	variableName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)
)

// apply sets the given fields on s and validates the result.
func (in scenarioInput) apply(s *agentline.TestScenario) error {
	for _, f := range []struct {
		in  *string
		out *string
	}{{in.Name, &s.Name}, {in.Persona, &s.Persona}, {in.Goal, &s.Goal}, {in.SuccessCriteria, &s.SuccessCriteria}} {
		if f.in != nil {
			*f.out = strings.TrimSpace(*f.in)
		}
	}
	if in.MaxTurns != nil {
		s.MaxTurns = *in.MaxTurns
	}
	if in.Variables != nil {
		s.Variables = *in.Variables
	}
	if s.MaxTurns == 0 {
		s.MaxTurns = defaultTurn
	}
	return validate(s)
}

func validate(s *agentline.TestScenario) error {
	if !scenarioName.MatchString(s.Name) {
		return agentline.Invalid("name", "name must be 1 to 100 letters, digits, spaces, _ . or -")
	}
	for _, f := range []struct{ name, v string }{{"persona", s.Persona}, {"goal", s.Goal}, {"success_criteria", s.SuccessCriteria}} {
		switch {
		case f.v == "":
			return agentline.Invalid(f.name, "%s is required", f.name)
		case utf8.RuneCountInString(f.v) > maxText:
			return agentline.Invalid(f.name, "%s is longer than %d characters", f.name, maxText)
		}
	}
	if s.MaxTurns < 1 || s.MaxTurns > MaxTurns {
		return agentline.Invalid("max_turns", "max_turns must be between 1 and %d", MaxTurns)
	}
	if len(s.Variables) > maxVars {
		return agentline.Invalid("variables", "at most %d variables", maxVars)
	}
	for k, v := range s.Variables {
		if !variableName.MatchString(k) {
			return agentline.Invalid("variables", "%q is not a variable name (letters, digits and _, not starting with a digit)", k)
		}
		if utf8.RuneCountInString(v) > 1000 {
			return agentline.Invalid("variables", "variable %s is longer than 1000 characters", k)
		}
	}
	return nil
}

func (h *Handler) listScenarios(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.store.TestScenarios(r.Context(), projectID, agentID)
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(s agentline.TestScenario) listing.Cursor { return listing.After(s.ID) })
}

func (h *Handler) createScenario(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in scenarioInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	s := agentline.TestScenario{ProjectID: projectID, AgentID: agentID}
	if err := in.apply(&s); err != nil {
		return err
	}
	if s, err = h.store.CreateTestScenario(r.Context(), s); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, s)
	return nil
}

func (h *Handler) getScenario(w http.ResponseWriter, r *http.Request) error {
	id, projectID, err := h.auth.AuthorizePath(r, "scenario_id", agentline.KindTestScenario, agentline.PermView)
	if err != nil {
		return err
	}
	s, err := h.store.TestScenario(r.Context(), projectID, id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s)
	return nil
}

func (h *Handler) updateScenario(w http.ResponseWriter, r *http.Request) error {
	id, projectID, err := h.auth.AuthorizePath(r, "scenario_id", agentline.KindTestScenario, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in scenarioInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	s, err := h.store.TestScenario(r.Context(), projectID, id)
	if err != nil {
		return err
	}
	if err := in.apply(&s); err != nil {
		return err
	}
	if s, err = h.store.UpdateTestScenario(r.Context(), s); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s)
	return nil
}

func (h *Handler) deleteScenario(w http.ResponseWriter, r *http.Request) error {
	return h.auth.DeletePath(w, r, "scenario_id", agentline.KindTestScenario, h.store.DeleteTestScenario)
}
