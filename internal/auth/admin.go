package auth

import (
	"context"
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Instance administrators manage accounts: list them, disable and enable
// them, make or unmake administrators, and make reset links. They reach
// accounts, not projects: being one grants no project role. The first
// account is one; `agentline user create --admin` makes more.

// AdminRoutes lists the routes only instance administrators reach.
func (h *Handler) AdminRoutes() []httpx.Route {
	r := h.svc.Route
	return []httpx.Route{
		r("GET", "/api/admin/users", h.listUsers),
		r("PATCH", "/api/admin/users/{user_id}", h.updateUser),
		r("POST", "/api/admin/users/{user_id}/password-reset", h.adminResetLink),
	}
}

// RequireAdmin refuses a signed-in user who is no instance administrator.
func RequireAdmin(ctx context.Context) (agentline.User, error) {
	u, ok := UserFrom(ctx)
	if !ok {
		return u, agentline.Errorf(agentline.EUnauthorized, "sign in first")
	}
	if !u.Admin {
		return u, agentline.Errorf(agentline.EForbidden, "only instance administrators manage accounts")
	}
	return u, nil
}

func (h *Handler) listUsers(w http.ResponseWriter, r *http.Request) error {
	if _, err := RequireAdmin(r.Context()); err != nil {
		return err
	}
	users, err := h.svc.store.Users(r.Context())
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, users, func(u agentline.User) listing.Cursor { return listing.After(u.ID) })
}

func (h *Handler) updateUser(w http.ResponseWriter, r *http.Request) error {
	if _, err := RequireAdmin(r.Context()); err != nil {
		return err
	}
	id, err := httpx.PathID(r, "user_id")
	if err != nil {
		return err
	}
	var in agentline.UserChange
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.Admin == nil && in.Disabled == nil {
		return agentline.Invalid("admin", "send admin or disabled (true or false)")
	}
	u, err := h.svc.store.UpdateUser(r.Context(), id, in)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, u)
	return nil
}

// adminResetLink makes a reset link for an account: mailed to the
// account's own address when mail is on (unless "email": false), else in
// the answer, once, to hand over.
func (h *Handler) adminResetLink(w http.ResponseWriter, r *http.Request) error {
	admin, err := RequireAdmin(r.Context())
	if err != nil {
		return err
	}
	id, err := httpx.PathID(r, "user_id")
	if err != nil {
		return err
	}
	in := struct {
		Email *bool `json:"email"`
	}{}
	if r.ContentLength != 0 {
		if err := httpx.Decode(r, &in); err != nil {
			return err
		}
	}
	u, err := h.svc.store.User(r.Context(), id)
	if err != nil {
		return err
	}
	link, err := h.svc.ResetLink(r.Context(), u, admin.ID, in.Email == nil || *in.Email)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if link.Delivery == agentline.DeliveryEmail {
		status = http.StatusAccepted
	}
	httpx.WriteJSON(w, status, link)
	return nil
}
