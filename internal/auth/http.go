package auth

import (
	"context"
	"net/http"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Features tells the console what this deployment offers.
type Features struct {
	TelephonyEnabled bool `json:"telephony_enabled"`
	OpenAIConfigured bool `json:"openai_configured"`
	GeminiConfigured bool `json:"gemini_configured"`
	Sandbox          bool `json:"sandbox"`
	// MailEnabled: invitations and reset links travel by email, and the
	// sign-in page offers "Forgot password?".
	MailEnabled bool `json:"mail_enabled"`
	// SandboxCarrier: phone numbers come from the sandbox's pretend
	// carrier (no one can dial them, nothing is charged).
	SandboxCarrier bool `json:"sandbox_carrier"`
}

// Handler serves sign-in, sign-out and /api/me.
type Handler struct {
	svc      *Service
	features Features
	sso      *SSO // nil without single sign-on
}

// WithSSO offers sign-in through sso's provider.
func (h *Handler) WithSSO(sso *SSO) *Handler {
	h.sso = sso
	return h
}

// NewHandler returns the auth routes' handler.
func NewHandler(svc *Service, features Features) *Handler {
	return &Handler{svc: svc, features: features}
}

// Routes lists the routes of this package.
func (h *Handler) Routes() []httpx.Route {
	return append([]httpx.Route{
		httpx.PublicRoute("POST", "/api/auth/login", h.login),
		h.svc.Route("POST", "/api/auth/logout", h.logout),
		h.svc.Route("GET", "/api/me", h.me),
		h.svc.Route("POST", "/api/me/password", h.changePassword),
		httpx.PublicRoute("GET", "/api/auth/methods", h.methods),
		httpx.PublicRoute("POST", "/api/auth/forgot-password", h.forgotPassword),
		httpx.PublicRoute("POST", "/api/auth/reset-password", h.resetPassword),
		httpx.PublicRoute("GET", OIDCStartPath, h.ssoStart),
		httpx.PublicRoute("GET", OIDCCallbackPath, h.ssoCallback),
	}, h.apiKeyRoutes()...)
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.Email) == "" {
		return agentline.Invalid("email", "email is required")
	}
	if in.Password == "" {
		return agentline.Invalid("password", "password is required")
	}
	login, err := h.svc.Login(PublicOrigin(r), in.Email, in.Password, ClientIP(r))
	if err != nil {
		if agentline.ErrorCode(err) == agentline.EUnauthorized {
			httpx.Logger(r.Context()).Warn("failed sign-in", "email", in.Email, "remote", ClientIP(r))
		}
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, login)
	return nil
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) error {
	if err := h.svc.Logout(r.Context(), bearer(r)); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}

// changePassword sets the signed-in user's password; their other sessions
// end, this one stays.
func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Current string `json:"current_password"`
		New     string `json:"new_password"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.Current == "" {
		return agentline.Invalid("current_password", "current_password is required")
	}
	if err := h.svc.ChangePassword(r.Context(), bearer(r), ClientIP(r), in.Current, in.New); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}

// methods tells the sign-in page what it may offer before anyone signs
// in: whether a forgotten password can be reset by email, and the single
// sign-on provider's button.
func (h *Handler) methods(w http.ResponseWriter, r *http.Request) error {
	m := map[string]any{"password_reset_by_email": h.svc.MailEnabled()}
	if h.sso != nil {
		m["sso"] = map[string]any{"name": h.sso.Name(), "url": OIDCStartPath, "only": h.svc.ssoOnly != ""}
	}
	httpx.WriteJSON(w, http.StatusOK, m)
	return nil
}

// forgotPassword mails a reset link to the account with the email, if
// there is one: the answer is the same either way.
func (h *Handler) forgotPassword(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email string `json:"email"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if err := h.svc.RequestReset(PublicOrigin(r), in.Email, ClientIP(r)); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusAccepted, map[string]string{
		"message": "If an account uses this email, a link to set a new password is on its way to it.",
	})
	return nil
}

// resetPassword sets a new password with a reset link's token.
func (h *Handler) resetPassword(w http.ResponseWriter, r *http.Request) error {
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
	u, err := h.svc.ResetPassword(PublicOrigin(r), in.Token, in.Password)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"email": u.Email,
		"message": "Your password is set, and every session of your account has ended: sign in with it."})
	return nil
}

func (h *Handler) me(w http.ResponseWriter, r *http.Request) error {
	u, _ := UserFrom(r.Context())
	f := h.features
	f.MailEnabled = h.svc.MailEnabled()
	httpx.WriteJSON(w, http.StatusOK, struct {
		User     agentline.User `json:"user"`
		Features Features       `json:"features"`
	}{u, f})
	return nil
}

// Route is a route behind a session token: the one way every package
// declares its console routes.
func (s *Service) Route(method, pattern string, fn httpx.HandlerFunc) httpx.Route {
	keys := keysMayUse(method, pattern)
	return httpx.Route{Method: method, Pattern: pattern, Auth: httpx.Session, Name: httpx.NameOf(fn),
		Handler: httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			r, err := s.signedIn(r, keys)
			if err != nil {
				return err
			}
			return fn(w, r)
		})}
}

// Require runs fn only for a request with a live session token, with the
// user in the request's context; API keys are refused.
func (s *Service) Require(fn httpx.HandlerFunc) http.Handler {
	return httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		r, err := s.SignedIn(r)
		if err != nil {
			return err
		}
		return fn(w, r)
	})
}

// SignedIn authenticates r's session token and returns r with the user in
// its context, for a public route that also serves the signed-in. API keys
// are refused: such routes (accepting an invitation) are people's.
func (s *Service) SignedIn(r *http.Request) (*http.Request, error) {
	return s.signedIn(r, false)
}

// signedIn is SignedIn that, when keys is true, also takes an API key: its
// maker is the request's user and the key rides along in the context, so
// that Authorize binds the request to the key's project and role. A key
// on a route that refuses keys is checked first all the same, so that a
// revoked or expired key hears so everywhere.
func (s *Service) signedIn(r *http.Request, keys bool) (*http.Request, error) {
	token := bearer(r)
	ctx := r.Context()
	var u agentline.User
	var err error
	if strings.HasPrefix(token, agentline.APIKeyPrefix) {
		var k agentline.APIKey
		if k, u, err = s.authenticateKey(ctx, token, ClientIP(r)); err != nil {
			return r, err
		}
		if !keys {
			return r, ErrKeyNotAllowed
		}
		ctx = WithAPIKey(ctx, k)
		ctx = httpx.WithLogger(ctx, httpx.Logger(ctx).With("api_key_id", k.ID))
	} else if u, err = s.Authenticate(ctx, token); err != nil {
		return r, err
	}
	ctx = WithUser(ctx, u)
	ctx = httpx.WithLogger(ctx, httpx.Logger(ctx).With("user_id", u.ID))
	ctx = agentline.WithAuditOrigin(ctx, auditOrigin(ctx, r, u))
	return r.WithContext(ctx), nil
}

// AuthorizePath is AuthorizeOwned for the object whose id is in the path
// segment param: it returns that id and its project's id. A malformed id is
// not_found, like a missing object.
func (s *Service) AuthorizePath(r *http.Request, param string, kind agentline.Kind, perm agentline.Permission) (id, projectID int64, err error) {
	if id, err = httpx.PathID(r, param); err != nil {
		return 0, 0, err
	}
	if projectID, err = s.AuthorizeOwned(r.Context(), kind, id, perm); err != nil {
		return 0, 0, err
	}
	return id, projectID, nil
}

// DeletePath serves the DELETE of the object whose id is in the path
// segment param, as every project-owned object's is: authorized as
// AuthorizePath with PermDelete, removed by del (given its project's id
// and its own), answered 204.
func (s *Service) DeletePath(w http.ResponseWriter, r *http.Request, param string, kind agentline.Kind, del func(ctx context.Context, projectID, id int64) error) error {
	id, projectID, err := s.AuthorizePath(r, param, kind, agentline.PermDelete)
	if err != nil {
		return err
	}
	if err := del(r.Context(), projectID, id); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}

// AuthorizeProjectPath is Authorize for the project whose id is the path's
// {project_id}: it returns that id and the user's role there. A malformed id
// is not_found, like a project the user is no member of.
func (s *Service) AuthorizeProjectPath(r *http.Request, perm agentline.Permission) (projectID int64, role agentline.Role, err error) {
	if projectID, err = httpx.PathID(r, "project_id"); err != nil {
		return 0, "", err
	}
	if role, err = s.Authorize(r.Context(), projectID, perm); err != nil {
		return 0, "", err
	}
	return projectID, role, nil
}

// AuthorizeMembers authorizes managing the members of the path's project
// (inviting, changing roles, removing), which needs PROJECT:DELETE and so
// an owner; others are refused with action in the words of what they
// tried: "Only owners can change roles; you are an editor."
func (s *Service) AuthorizeMembers(r *http.Request, action string) (int64, error) {
	projectID, err := httpx.PathID(r, "project_id")
	if err != nil {
		return 0, err
	}
	role, err := s.Authorize(r.Context(), projectID, agentline.PermDelete)
	if agentline.ErrorCode(err) == agentline.EForbidden {
		return 0, OwnersOnly(role, action)
	}
	if err != nil {
		return 0, err
	}
	return projectID, nil
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// ClientIP is the key per-client limits (sign-in throttling, form submits)
// count under: the client address the HTTP edge resolved, which behind a
// trusted proxy is the forwarded one (see httpx.Edge.TrustedProxies), else
// the TCP peer; an IPv6 client counts as its /64 (httpx.ClientKey).
func ClientIP(r *http.Request) string {
	if a, ok := httpx.ClientAddr(r.Context()); ok {
		return httpx.ClientKey(a)
	}
	if a, ok := httpx.PeerAddr(r); ok {
		return httpx.ClientKey(a)
	}
	return r.RemoteAddr
}

// PublicOrigin is the context of a request on a public route, with its
// client and request id for the audit log; who acts is not known yet.
func PublicOrigin(r *http.Request) context.Context {
	return agentline.WithAuditOrigin(r.Context(), agentline.AuditOrigin{Actor: agentline.Actor{Kind: agentline.ActorSystem},
		ClientIP: ClientIP(r), RequestID: httpx.RequestID(r.Context())})
}

// auditOrigin is who the request acts as in the audit log: the API key
// when it came with one (named by its prefix), else the signed-in person.
func auditOrigin(ctx context.Context, r *http.Request, u agentline.User) agentline.AuditOrigin {
	o := agentline.AuditOrigin{Actor: agentline.Actor{Kind: agentline.ActorUser, ID: u.ID, Email: u.Email},
		ClientIP: ClientIP(r), RequestID: httpx.RequestID(ctx)}
	if k, ok := APIKeyFrom(ctx); ok {
		o.Actor = agentline.Actor{Kind: agentline.ActorAPIKey, ID: k.ID, KeyPrefix: k.Prefix}
	}
	return o
}
