package api

import (
	"net/http"
	"strconv"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Listing members needs PROJECT:VIEW; inviting, changing roles and
// removing members needs PROJECT:DELETE, which only owners have. Nobody is
// added to a project without their consent: POST .../members makes an
// invitation, exactly as POST .../invites does, and answers 202 since the
// invitee has yet to accept.

func (h *Handler) listMembers(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.store.Members(r.Context(), projectID) // in order of joining
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(m agentline.Member) listing.Cursor {
		return listing.AfterTime(m.CreatedAt, strconv.FormatInt(m.UserID, 10))
	})
}

func (h *Handler) inviteMember(w http.ResponseWriter, r *http.Request) error {
	return h.invite(w, r, http.StatusAccepted)
}

// memberPath authorizes managing the path's project's members (action
// says what, for the refusal) and reads the path's user_id.
func (h *Handler) memberPath(r *http.Request, action string) (projectID, userID int64, err error) {
	if projectID, err = h.auth.AuthorizeMembers(r, action); err != nil {
		return 0, 0, err
	}
	if userID, err = httpx.PathID(r, "user_id"); err != nil {
		return 0, 0, err
	}
	return projectID, userID, nil
}

func (h *Handler) setMemberRole(w http.ResponseWriter, r *http.Request) error {
	projectID, userID, err := h.memberPath(r, "change roles")
	if err != nil {
		return err
	}
	var in struct {
		Role agentline.Role `json:"role"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if !in.Role.Valid() {
		return agentline.Invalid("role", "role must be owner, editor or viewer")
	}
	m, err := h.store.SetMemberRole(r.Context(), projectID, userID, in.Role)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, m)
	return nil
}

func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request) error {
	projectID, userID, err := h.memberPath(r, "remove members")
	if err != nil {
		return err
	}
	if err := h.store.RemoveMember(r.Context(), projectID, userID); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}
