package api

import (
	"net/http"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Listing members needs PROJECT:VIEW; adding, changing and removing them needs
// PROJECT:DELETE, which only owners have.

func (h *Handler) listMembers(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.store.Members(r.Context(), projectID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

func (h *Handler) setMember(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	var in struct {
		Email string         `json:"email"`
		Role  agentline.Role `json:"role"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.Email) == "" {
		return agentline.Invalid("email", "email is required")
	}
	if !in.Role.Valid() {
		return agentline.Invalid("role", "role must be owner, editor or viewer")
	}
	m, created, err := h.store.SetMember(r.Context(), projectID, in.Email, in.Role)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpx.WriteJSON(w, status, m)
	return nil
}

func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request) error {
	projectID, err := httpx.PathID(r, "project_id")
	if err != nil {
		return err
	}
	userID, err := httpx.PathID(r, "user_id")
	if err != nil {
		return err
	}
	if _, err := h.auth.Authorize(r.Context(), projectID, agentline.PermDelete); err != nil {
		return err
	}
	if err := h.store.RemoveMember(r.Context(), projectID, userID); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}
