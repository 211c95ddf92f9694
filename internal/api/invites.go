package api

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Invitations are made, listed and withdrawn by owners (PROJECT:DELETE,
// like members). Reading and accepting one is public: the token is the
// credential; accepting for an existing account also takes that
// account's session.

func (h *Handler) inviteRoutes() []httpx.Route {
	r := h.auth.Route
	return []httpx.Route{
		r("GET", "/api/projects/{project_id}/invites", h.listInvites),
		r("POST", "/api/projects/{project_id}/invites", h.createInvite),
		r("DELETE", "/api/invites/{invite_id}", h.deleteInvite),
		httpx.PublicRoute("POST", "/api/invites/details", h.inviteDetails),
		httpx.PublicRoute("POST", "/api/invites/accept", h.acceptInvite),
	}
}

func (h *Handler) listInvites(w http.ResponseWriter, r *http.Request) error {
	projectID, err := h.auth.AuthorizeMembers(r, "see the invitations")
	if err != nil {
		return err
	}
	list, err := h.store.Invites(r.Context(), projectID)
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(i agentline.Invite) listing.Cursor { return listing.After(i.ID) })
}

func (h *Handler) createInvite(w http.ResponseWriter, r *http.Request) error {
	return h.invite(w, r, http.StatusCreated)
}

// invite makes an invitation from the body's email and role and answers
// it with status: the one way anyone is added to a project.
func (h *Handler) invite(w http.ResponseWriter, r *http.Request, status int) error {
	projectID, err := h.auth.AuthorizeMembers(r, "invite people")
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
	if in.Kind != "" && in.Kind != agentline.InviteJoin {
		return agentline.Invalid("kind", "invitations have no kind but \"invite\": a password is reset only by its holder "+
			"(\"Forgot password?\" on the sign-in page, when this agentline sends mail) or by an instance administrator")
	}
	inv, err := h.auth.CreateInvite(r.Context(), projectID, in.Email, in.Role)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, status, inv)
	return nil
}

func (h *Handler) deleteInvite(w http.ResponseWriter, r *http.Request) error {
	return h.auth.DeletePath(w, r, "invite_id", agentline.KindInvite, h.store.DeleteInvite)
}

type tokenBody struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

func decodeToken(r *http.Request) (tokenBody, error) {
	var in tokenBody
	if err := httpx.Decode(r, &in); err != nil {
		return in, err
	}
	if in.Token == "" {
		return in, agentline.Invalid("token", "token is required")
	}
	return in, nil
}

// inviteDetails tells the invitation's page who invites to what.
func (h *Handler) inviteDetails(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeToken(r)
	if err != nil {
		return err
	}
	d, err := h.auth.InviteDetails(r.Context(), in.Token)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}

// acceptInvite accepts signed in (Authorization: Bearer, for the invited
// email's account: 200 with the invitation), or signed out with a new
// password (202, the same answer whether or not the email has an
// account; see auth.AcceptInviteNewAccount).
func (h *Handler) acceptInvite(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeToken(r)
	if err != nil {
		return err
	}
	if r.Header.Get("Authorization") != "" {
		if r, err = h.auth.SignedIn(r); err != nil {
			return err
		}
		inv, err := h.auth.AcceptInvite(r.Context(), in.Token)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, inv)
		return nil
	}
	answer, err := h.auth.AcceptInviteNewAccount(auth.PublicOrigin(r), in.Token, in.Password)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusAccepted, answer)
	return nil
}
