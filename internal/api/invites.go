package api

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Invite and reset links are made, listed and withdrawn by owners
// (PROJECT:DELETE, like members); accepting one is public: the link's
// token is the credential.

func (h *Handler) inviteRoutes() []httpx.Route {
	r := h.auth.Route
	return []httpx.Route{
		r("GET", "/api/projects/{project_id}/invites", h.listInvites),
		r("POST", "/api/projects/{project_id}/invites", h.createInvite),
		r("DELETE", "/api/invites/{invite_id}", h.deleteInvite),
		{Method: "POST", Pattern: "/api/invites/accept", Auth: httpx.Public, Name: httpx.NameOf(h.acceptInvite), Handler: httpx.HandlerFunc(h.acceptInvite)},
	}
}

func (h *Handler) listInvites(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	list, err := h.store.Invites(r.Context(), projectID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

func (h *Handler) createInvite(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	var in struct {
		Kind  agentline.InviteKind `json:"kind"`
		Email string               `json:"email"`
		Role  agentline.Role       `json:"role"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	inv, err := h.auth.CreateInvite(r.Context(), projectID, in.Kind, in.Email, in.Role)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, inv)
	return nil
}

func (h *Handler) deleteInvite(w http.ResponseWriter, r *http.Request) error {
	id, projectID, err := h.auth.AuthorizePath(r, "invite_id", agentline.KindInvite, agentline.PermDelete)
	if err != nil {
		return err
	}
	if err := h.store.DeleteInvite(r.Context(), projectID, id); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}

func (h *Handler) acceptInvite(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.Token == "" {
		return agentline.Invalid("token", "token is required")
	}
	inv, err := h.auth.AcceptInvite(r.Context(), in.Token, in.Password)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, inv)
	return nil
}
