package auth

import (
	"net/http"
	"strings"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// keyShown is how much of a key lists show: the fixed prefix and a few
// random characters, enough to tell keys apart, far too few to guess one.
const keyShown = len(agentline.APIKeyPrefix) + 6

// apiKeyRoutes are the routes that manage a project's API keys; keys
// themselves are refused on them (keysMayUse).
func (h *Handler) apiKeyRoutes() []httpx.Route {
	return []httpx.Route{
		h.svc.Route("GET", "/api/projects/{project_id}/api-keys", h.listAPIKeys),
		h.svc.Route("POST", "/api/projects/{project_id}/api-keys", h.createAPIKey),
		h.svc.Route("DELETE", "/api/api-keys/{key_id}", h.revokeAPIKey),
	}
}

// listAPIKeys shows every member the project's keys: names, prefixes,
// roles and last use, never a key.
func (h *Handler) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.svc.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.svc.store.APIKeys(r.Context(), projectID)
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(k agentline.APIKey) listing.Cursor { return listing.After(k.ID) })
}

// createAPIKey makes a key and answers it once; only its hash is stored.
func (h *Handler) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Name      string         `json:"name"`
		Role      agentline.Role `json:"role"`
		ExpiresAt *time.Time     `json:"expires_at"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	projectID, err := h.svc.AuthorizeMembers(r, "create API keys")
	if err != nil {
		return err
	}
	in.Name = strings.TrimSpace(in.Name)
	switch {
	case in.Name == "":
		return agentline.Invalid("name", "name is required")
	case len(in.Name) > 100:
		return agentline.Invalid("name", "name is longer than 100 characters")
	case !in.Role.Valid():
		return agentline.Invalid("role", "role must be owner, editor or viewer")
	case in.ExpiresAt != nil && !in.ExpiresAt.After(h.svc.now()):
		return agentline.Invalid("expires_at", "expires_at must be in the future")
	}
	u, _ := UserFrom(r.Context())
	// Only owners get here, so every role is at most the maker's; the
	// check stays in case that ever changes.
	if role, err := h.svc.store.MemberRole(r.Context(), projectID, u.ID); err != nil || rank(in.Role) > rank(role) {
		return agentline.Invalid("role", "a key's role can be no higher than yours")
	}
	token, err := NewToken(agentline.APIKeyPrefix)
	if err != nil {
		return err
	}
	k := agentline.APIKey{ProjectID: projectID, Name: in.Name, Role: in.Role, Prefix: token[:keyShown], CreatedBy: u.ID, ExpiresAt: in.ExpiresAt}
	if k.ExpiresAt != nil {
		t := k.ExpiresAt.UTC().Truncate(time.Second)
		k.ExpiresAt = &t
	}
	if k, err = h.svc.store.CreateAPIKey(r.Context(), k, HashToken(token)); err != nil {
		return err
	}
	k.Key = token
	httpx.WriteJSON(w, http.StatusCreated, k)
	return nil
}

// revokeAPIKey revokes a key at once: every instance looks keys up per
// request, so the next request with it is refused anywhere.
func (h *Handler) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "key_id")
	if err != nil {
		return err
	}
	projectID, err := h.svc.store.ProjectOf(r.Context(), agentline.KindAPIKey, id)
	if err != nil {
		return err
	}
	role, err := h.svc.Authorize(r.Context(), projectID, agentline.PermDelete)
	switch agentline.ErrorCode(err) {
	case agentline.ENotFound:
		return agentline.NotFound("API key")
	case agentline.EForbidden:
		return OwnersOnly(role, "revoke API keys")
	}
	if err != nil {
		return err
	}
	if err := h.svc.store.RevokeAPIKey(r.Context(), projectID, id); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}
