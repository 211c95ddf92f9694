package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

type projectInput struct {
	Name                   *string        `json:"name"`
	Branding               *brandingInput `json:"branding"`
	RecordingRetentionDays *int           `json:"recording_retention_days"`
}

// brandingInput changes only the branding fields that are sent, so that
// PATCH {"branding": {"logo_url": ...}} keeps the display name.
type brandingInput struct {
	DisplayName *string `json:"display_name"`
	LogoURL     *string `json:"logo_url"`
}

func (in projectInput) apply(p *agentline.Project) error {
	if in.Name != nil {
		p.Name = strings.TrimSpace(*in.Name)
	}
	if b := in.Branding; b != nil {
		if b.DisplayName != nil {
			p.Branding.DisplayName = strings.TrimSpace(*b.DisplayName)
		}
		if b.LogoURL != nil {
			p.Branding.LogoURL = strings.TrimSpace(*b.LogoURL)
		}
	}
	if in.RecordingRetentionDays != nil {
		p.RecordingRetentionDays = *in.RecordingRetentionDays
	}
	if p.RecordingRetentionDays < 0 || p.RecordingRetentionDays > 3650 {
		return agentline.Invalid("recording_retention_days", "recording_retention_days must be 0 (keep) to 3650")
	}
	if p.Name == "" {
		return agentline.Invalid("name", "name is required")
	}
	if len(p.Name) > 200 {
		return agentline.Invalid("name", "name is longer than 200 characters")
	}
	if len(p.Branding.DisplayName) > 200 {
		return agentline.Invalid("branding.display_name", "display_name is longer than 200 characters")
	}
	if u := p.Branding.LogoURL; u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return agentline.Invalid("branding.logo_url", "logo_url must be an http(s) URL")
	}
	return nil
}

func (h *Handler) listProjects(w http.ResponseWriter, r *http.Request) error {
	u, _ := auth.UserFrom(r.Context())
	list, err := h.store.ProjectsForUser(r.Context(), u.ID)
	if err != nil {
		return err
	}
	if k, ok := auth.APIKeyFrom(r.Context()); ok {
		// A key sees its own project alone, with its own role.
		list = slices.DeleteFunc(list, func(p agentline.Project) bool { return p.ID != k.ProjectID })
		for i := range list {
			list[i].Role = auth.LowerRole(list[i].Role, k.Role)
		}
	}
	return listing.WriteWhole(w, r, list, func(p agentline.Project) listing.Cursor { return listing.After(p.ID) })
}

func (h *Handler) createProject(w http.ResponseWriter, r *http.Request) error {
	var in projectInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	var p agentline.Project
	if err := in.apply(&p); err != nil {
		return err
	}
	u, _ := auth.UserFrom(r.Context())
	p, err := h.store.CreateProject(r.Context(), p, u.ID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, p)
	return nil
}

func (h *Handler) getProject(w http.ResponseWriter, r *http.Request) error {
	projectID, role, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	p, err := h.store.Project(r.Context(), projectID)
	if err != nil {
		return err
	}
	p.Role = role
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (h *Handler) updateProject(w http.ResponseWriter, r *http.Request) error {
	projectID, role, err := h.auth.AuthorizeProjectPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in projectInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	p, err := h.store.Project(r.Context(), projectID)
	if err != nil {
		return err
	}
	if err := in.apply(&p); err != nil {
		return err
	}
	if p, err = h.store.UpdateProject(r.Context(), p); err != nil {
		return err
	}
	p.Role = role
	httpx.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (h *Handler) deleteProject(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	if err := h.store.DeleteProject(r.Context(), projectID); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}
