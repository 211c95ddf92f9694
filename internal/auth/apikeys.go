package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// APIKeyStore is what API keys need from storage.
type APIKeyStore interface {
	CreateAPIKey(ctx context.Context, k agentline.APIKey, keyHash string) (agentline.APIKey, error)
	APIKeys(ctx context.Context, projectID int64) ([]agentline.APIKey, error)
	APIKeyByHash(ctx context.Context, keyHash string) (agentline.APIKey, error)
	RevokeAPIKey(ctx context.Context, projectID, id int64) error
	TouchAPIKeys(ctx context.Context, used map[int64]time.Time) error
}

// keyTouchEvery is how often at most one instance writes a key's
// last_used_at: a list shows it to the minute, and a write per request
// would double the database work of automation.
const keyTouchEvery = time.Minute

// keyUse remembers when this instance last wrote each key's last use.
type keyUse struct {
	mu      sync.Mutex
	written map[int64]time.Time
}

// due reports whether key id's use at now should be written, and if so
// counts it as written.
func (u *keyUse) due(id int64, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.written == nil || len(u.written) > maxTrackedKeys {
		u.written = map[int64]time.Time{}
	}
	if last, ok := u.written[id]; ok && now.Sub(last) < keyTouchEvery {
		return false
	}
	u.written[id] = now
	return true
}

var (
	errKeyInvalid = agentline.Errorf(agentline.EUnauthorized, "invalid API key")
	errKeyRevoked = agentline.Errorf(agentline.EUnauthorized, "API key revoked")
	errKeyExpired = agentline.Errorf(agentline.EUnauthorized, "API key expired")
	// ErrKeyNotAllowed refuses a key on what only people may do.
	ErrKeyNotAllowed = agentline.Errorf(agentline.EForbidden,
		"API keys cannot manage members, invitations, API keys, provider accounts or accounts; sign in as a person to do this")
)

// authenticateKey returns the live key token is and the user who made it.
// The key is looked up in the database on every request, so a revocation
// on any instance holds from the next request on. Unknown keys count
// against the client like wrong passwords do (they are guesses; a revoked
// or expired key is not), and past the limit the client is refused
// before any lookup.
func (s *Service) authenticateKey(ctx context.Context, token, clientIP string) (agentline.APIKey, agentline.User, error) {
	keys := []string{"ip:" + clientIP}
	now := s.now()
	if wait := s.keyFails.blocked(keys, now); wait > 0 {
		return agentline.APIKey{}, agentline.User{}, limited(wait, "too many invalid API keys from this client; try again later")
	}
	k, err := s.store.APIKeyByHash(ctx, HashToken(token))
	switch {
	case errors.Is(err, agentline.ErrNotFound):
		err = errKeyInvalid
	case err != nil:
		return k, agentline.User{}, err
	case k.RevokedAt != nil:
		err = errKeyRevoked
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		err = errKeyExpired
	}
	if errors.Is(err, errKeyInvalid) {
		s.keyFails.fail(keys, now)
	}
	if err != nil {
		return k, agentline.User{}, err
	}
	u, err := s.store.User(ctx, k.CreatedBy)
	if errors.Is(err, agentline.ErrNotFound) {
		return k, u, errKeyInvalid // its maker's account is gone
	}
	if err != nil {
		return k, u, err
	}
	if u.Disabled {
		return k, u, agentline.Errorf(agentline.EForbidden, "the account that made this API key is disabled")
	}
	if s.keyUse.due(k.ID, now) {
		if err := s.store.TouchAPIKeys(ctx, map[int64]time.Time{k.ID: now}); err != nil {
			return k, u, err
		}
	}
	return k, u, nil
}

// keysMayUse reports whether an API key may call the route: never the
// routes of people and their accounts (sign-in, /api/me, admin, creating
// projects), nor those that manage members, invitations, API keys or
// provider accounts, whatever the key's role. GET /api/projects stays
// open: with a key it lists the key's project alone.
func keysMayUse(method, pattern string) bool {
	for _, p := range []string{"/api/me", "/api/auth/", "/api/admin/"} {
		if strings.HasPrefix(pattern, p) {
			return false
		}
	}
	for _, part := range []string{"/members", "/invites", "/api-keys", "/providers"} {
		if strings.Contains(pattern, part) {
			return false
		}
	}
	return !(method == "POST" && pattern == "/api/projects")
}

type apiKeyCtx struct{}

// WithAPIKey returns ctx carrying the API key a request authenticated with.
func WithAPIKey(ctx context.Context, k agentline.APIKey) context.Context {
	return context.WithValue(ctx, apiKeyCtx{}, k)
}

// APIKeyFrom returns the API key of ctx's request, if it came with one.
func APIKeyFrom(ctx context.Context) (agentline.APIKey, bool) {
	k, ok := ctx.Value(apiKeyCtx{}).(agentline.APIKey)
	return k, ok
}

// rank orders roles so that a key's role can be capped by its maker's.
func rank(r agentline.Role) int {
	return map[agentline.Role]int{agentline.RoleViewer: 1, agentline.RoleEditor: 2, agentline.RoleOwner: 3}[r]
}

// LowerRole is the lesser of two roles: what a key of role b acts with
// for a maker of role a.
func LowerRole(a, b agentline.Role) agentline.Role {
	if rank(a) < rank(b) {
		return a
	}
	return b
}

// keyRole is the role a key of ctx acts with in projectID: not_found for
// any project but its own, as for a stranger, and never more than its
// maker's role there today (a maker who left takes the key's access along).
func keyRole(k agentline.APIKey, projectID int64, makerRole agentline.Role) (agentline.Role, error) {
	if k.ProjectID != projectID {
		return "", agentline.NotFound("project")
	}
	return LowerRole(makerRole, k.Role), nil
}

// errKeyOnly refuses a session token, or no token, on a route that only
// API keys may call.
var errKeyOnly = agentline.Errorf(agentline.EUnauthorized,
	"this endpoint takes a project's API key: send Authorization: Bearer agl_sk_... (a key is made under the project's API keys); session tokens are not accepted")

// KeyRoute is a route that only an API key may call (the MCP server):
// fn runs with the key and its maker in the request's context, so that
// the routes it calls on the key's behalf bind it to the key's project and
// role as they bind any key's request. A revoked, expired or unknown key
// hears why, as everywhere.
func (s *Service) KeyRoute(method, pattern string, fn http.HandlerFunc) httpx.Route {
	return httpx.Route{Method: method, Pattern: pattern, Auth: httpx.APIKey, Name: httpx.NameOf(fn),
		Handler: httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			token := bearer(r)
			if !strings.HasPrefix(token, agentline.APIKeyPrefix) {
				return errKeyOnly
			}
			k, u, err := s.authenticateKey(r.Context(), token, ClientIP(r))
			if err != nil {
				return err
			}
			ctx := WithUser(WithAPIKey(r.Context(), k), u)
			ctx = httpx.WithLogger(ctx, httpx.Logger(ctx).With("api_key_id", k.ID, "user_id", u.ID))
			fn(w, r.WithContext(ctx))
			return nil
		})}
}
