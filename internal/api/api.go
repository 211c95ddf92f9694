// Package api is the management REST API under /api: projects, members and
// agents (later channels, keys, numbers and calls). Every handler has one
// shape: read ids from the path, authorize the caller on the project, decode,
// validate, store, answer.
package api

import (
	"context"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
)

// Store is what the management API needs from storage.
type Store interface {
	CreateProject(ctx context.Context, p agentline.Project, ownerID int64) (agentline.Project, error)
	ProjectsForUser(ctx context.Context, userID int64) ([]agentline.Project, error)
	Project(ctx context.Context, projectID int64) (agentline.Project, error)
	UpdateProject(ctx context.Context, p agentline.Project) (agentline.Project, error)
	DeleteProject(ctx context.Context, projectID int64) error

	Members(ctx context.Context, projectID int64) ([]agentline.Member, error)
	SetMemberRole(ctx context.Context, projectID, userID int64, role agentline.Role) (agentline.Member, error)
	RemoveMember(ctx context.Context, projectID, userID int64) error
	Invites(ctx context.Context, projectID int64) ([]agentline.Invite, error)
	DeleteInvite(ctx context.Context, projectID, inviteID int64) error

	CreateAgent(ctx context.Context, a agentline.Agent) (agentline.Agent, error)
	Agents(ctx context.Context, projectID int64) ([]agentline.Agent, error)
	Agent(ctx context.Context, projectID, agentID int64) (agentline.Agent, error)
	UpdateAgent(ctx context.Context, a agentline.Agent) (agentline.Agent, error)
	DeleteAgent(ctx context.Context, projectID, agentID int64) error
	AgentVersions(ctx context.Context, projectID, agentID int64, before, limit int) ([]agentline.AgentVersion, error)
	AgentVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.AgentVersion, error)
	PublishAgentVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.Agent, error)

	ProjectOf(ctx context.Context, kind agentline.Kind, id int64) (int64, error)
}

// Handler serves the management API.
type Handler struct {
	store Store
	auth  *auth.Service
}

// New returns the management API's handler.
func New(s Store, a *auth.Service) *Handler { return &Handler{store: s, auth: a} }

// Routes lists the routes of the management API.
func (h *Handler) Routes() []httpx.Route {
	r := h.auth.Route
	return append(h.inviteRoutes(),
		r("GET", "/api/projects", h.listProjects),
		r("POST", "/api/projects", h.createProject),
		r("GET", "/api/projects/{project_id}", h.getProject),
		r("PATCH", "/api/projects/{project_id}", h.updateProject),
		r("DELETE", "/api/projects/{project_id}", h.deleteProject),

		r("GET", "/api/projects/{project_id}/members", h.listMembers),
		r("POST", "/api/projects/{project_id}/members", h.inviteMember),
		r("PATCH", "/api/projects/{project_id}/members/{user_id}", h.setMemberRole),
		r("DELETE", "/api/projects/{project_id}/members/{user_id}", h.removeMember),

		r("GET", "/api/projects/{project_id}/agents", h.listAgents),
		r("POST", "/api/projects/{project_id}/agents", h.createAgent),
		r("GET", "/api/agents/{agent_id}", h.getAgent),
		r("PATCH", "/api/agents/{agent_id}", h.updateAgent),
		r("DELETE", "/api/agents/{agent_id}", h.deleteAgent),
		r("GET", "/api/agents/{agent_id}/versions", h.listVersions),
		r("GET", "/api/agents/{agent_id}/versions/{n}", h.getVersion),
		r("POST", "/api/agents/{agent_id}/versions/{n}/publish", h.publishVersion),
		r("GET", "/api/catalog", h.catalog),
	)
}
