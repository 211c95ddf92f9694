// Package auth signs users in and decides what they may do: passwords,
// session tokens (stored as SHA-256 hashes), login throttling, and the one
// place where roles become PROJECT:VIEW|CREATE|DELETE decisions.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Store is what auth needs from storage.
type Store interface {
	CreateUser(ctx context.Context, email, passwordHash string) (agentline.User, error)
	UserByEmail(ctx context.Context, email string) (agentline.User, string, error)
	User(ctx context.Context, id int64) (agentline.User, error)
	Users(ctx context.Context) ([]agentline.User, error)
	UpdateUser(ctx context.Context, id int64, ch agentline.UserChange) (agentline.User, error)
	StartAuthSession(ctx context.Context, userID int64, tokenHash string, expiresAt time.Time, action string) error
	AppendAudit(ctx context.Context, e agentline.AuditEntry) error
	UserByTokenHash(ctx context.Context, tokenHash string) (agentline.User, error)
	DeleteAuthSession(ctx context.Context, tokenHash string) error
	MemberRole(ctx context.Context, projectID, userID int64) (agentline.Role, error)
	ProjectOf(ctx context.Context, kind agentline.Kind, id int64) (int64, error)
	InviteStore
	ResetStore
	APIKeyStore
}

// Service signs users in and authorizes their requests.
type Service struct {
	store Store
	ttl   time.Duration
	// passwords counts wrong passwords on every route that checks one;
	// resets counts reset emails asked for.
	passwords *throttle
	resets    *throttle
	// keyFails counts unknown, revoked and expired API keys per client.
	keyFails  *throttle
	keyUse    keyUse
	now       func() time.Time
	cost      int
	inviteTTL time.Duration
	resetTTL  time.Duration
	// enqueue queues a job outside any store write (a reset email); nil
	// when mail is off, and then links are handed over instead of mailed.
	enqueue func(context.Context, agentline.Job) error
	// dummyHash is compared against when the email is unknown, so that a
	// failed login takes as long whichever part was wrong. It is made on
	// first use, at the service's cost.
	// ssoOnly names the provider when passwords are refused to all but
	// instance administrators (AGENTLINE_OIDC_ONLY).
	ssoOnly   string
	dummyOnce sync.Once
	dummyHash []byte
}

// Option changes a Service made by New.
type Option func(*Service)

// WithPasswordCost sets the bcrypt cost of new password hashes
// (AGENTLINE_PASSWORD_COST). Tests use bcrypt.MinCost to stay fast.
func WithPasswordCost(cost int) Option { return func(s *Service) { s.cost = cost } }

// WithClock replaces time.Now, for tests of expiry and throttling.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLinkTTLs sets how long invitations and password reset links work
// (AGENTLINE_INVITE_TTL, AGENTLINE_RESET_TTL).
func WithLinkTTLs(invite, reset time.Duration) Option {
	return func(s *Service) { s.inviteTTL, s.resetTTL = invite, reset }
}

// WithMail turns mail on: invitations and reset links go by email only,
// through jobs that enqueue queues (the durable job queue's Enqueue).
func WithMail(enqueue func(context.Context, agentline.Job) error) Option {
	return func(s *Service) { s.enqueue = enqueue }
}

// WithSSOOnly refuses passwords to everyone but instance administrators,
// who sign in with one when the provider fails (break-glass, logged);
// provider is named in the refusal.
func WithSSOOnly(provider string) Option { return func(s *Service) { s.ssoOnly = provider } }

// New returns a Service whose sign-ins last ttl.
func New(store Store, ttl time.Duration, opts ...Option) *Service {
	s := &Service{store: store, ttl: ttl, passwords: newThrottle(maxFailsPerEmail, maxFailsPerIP),
		resets:   newThrottle(maxResetsPerEmail, maxResetsPerIP),
		keyFails: newThrottle(maxFailsPerIP, maxFailsPerIP), now: time.Now, cost: bcrypt.DefaultCost,
		inviteTTL: 7 * 24 * time.Hour, resetTTL: time.Hour}
	for _, o := range opts {
		o(s)
	}
	return s
}

func (s *Service) dummy() []byte {
	s.dummyOnce.Do(func() {
		s.dummyHash, _ = bcrypt.GenerateFromPassword([]byte("not a real password"), s.cost)
	})
	return s.dummyHash
}

// MinPasswordLength is the shortest password accepted.
const MinPasswordLength = 8

// hashPassword returns the bcrypt hash of password at cost.
func hashPassword(password string, cost int) (string, error) {
	if len(password) > 72 {
		return "", agentline.Invalid("password", "password is longer than 72 bytes")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// CreateUser validates the email and password and stores a new user.
func (s *Service) CreateUser(ctx context.Context, email, password string) (agentline.User, error) {
	email = strings.TrimSpace(email)
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || a.Name != "" {
		return agentline.User{}, agentline.Invalid("email", "%q is not an email address", email)
	}
	if len(password) < MinPasswordLength {
		return agentline.User{}, agentline.Invalid("password", "password must be at least %d characters", MinPasswordLength)
	}
	hash, err := hashPassword(password, s.cost)
	if err != nil {
		return agentline.User{}, err
	}
	return s.store.CreateUser(ctx, email, hash)
}

// Login is a successful sign-in.
type Login struct {
	Token     string         `json:"token"`
	ExpiresAt time.Time      `json:"expires_at"`
	User      agentline.User `json:"user"`
}

var errBadLogin = agentline.Errorf(agentline.EUnauthorized, "email or password is wrong")

// Login checks the password and starts a session. Every failure says the
// same thing whether or not the email has an account; wrong passwords are
// counted per email and per client on every route that checks one
// (checkPassword), and refused with rate_limited past the limit.
func (s *Service) Login(ctx context.Context, email, password, clientIP string) (Login, error) {
	u, hash, err := s.store.UserByEmail(ctx, email)
	if err != nil && !errors.Is(err, agentline.ErrNotFound) {
		return Login{}, err
	}
	if err != nil {
		hash = "" // compared against the dummy hash: the same work
	}
	if err := s.checkPassword(email, clientIP, hash, password); err != nil {
		if agentline.ErrorCode(err) == agentline.ERateLimited {
			// Past the throttle, guesses are refused unchecked: logging
			// each would let a flood of them fill the log.
			return Login{}, err
		}
		// The same entry whether or not the email has an account.
		return Login{}, s.logSignIn(ctx, "auth.sign_in_failed", agentline.User{Email: email}, err)
	}
	if u.Disabled {
		return Login{}, s.logSignIn(ctx, "auth.sign_in_refused", u,
			agentline.Errorf(agentline.EForbidden, "this account is disabled; ask an administrator of this agentline"))
	}
	action := "auth.sign_in"
	if s.ssoOnly != "" {
		if !u.Admin {
			return Login{}, s.logSignIn(ctx, "auth.sign_in_refused", u,
				agentline.Errorf(agentline.EForbidden, "this agentline signs in with %s only: use \"Sign in with %s\"", s.ssoOnly, s.ssoOnly))
		}
		httpx.Logger(ctx).Warn("break-glass password sign-in of an instance administrator while single sign-on is required",
			"user_id", u.ID, "email", u.Email, "remote", clientIP)
		action = "auth.break_glass_sign_in"
	}
	return s.startSession(ctx, u, action)
}

// logSignIn writes the instance's audit entry of a sign-in that did not
// happen (action) by u (an email alone when it is unknown who tried),
// and returns why, the error the caller answers.
func (s *Service) logSignIn(ctx context.Context, action string, u agentline.User, why error) error {
	o := agentline.AuditOriginFrom(ctx)
	o.Actor = agentline.Actor{Kind: agentline.ActorUser, ID: u.ID, Email: strings.ToLower(strings.TrimSpace(u.Email))}
	e := agentline.AuditEntry{Actor: o.Actor, Action: action, Resource: agentline.AuditResource{Kind: "user"},
		ClientIP: o.ClientIP, RequestID: o.RequestID}
	if u.ID != 0 {
		e.Resource.ID = strconv.FormatInt(u.ID, 10)
	}
	if err := s.store.AppendAudit(ctx, e); err != nil {
		return errors.Join(why, err)
	}
	return why
}

// startSession signs u in, by password or single sign-on alike; action
// names the way in the audit log, whose entry u is the actor of.
func (s *Service) startSession(ctx context.Context, u agentline.User, action string) (Login, error) {
	o := agentline.AuditOriginFrom(ctx)
	o.Actor = agentline.Actor{Kind: agentline.ActorUser, ID: u.ID, Email: u.Email}
	ctx = agentline.WithAuditOrigin(ctx, o)
	token, err := NewToken("als_")
	if err != nil {
		return Login{}, err
	}
	expires := s.now().Add(s.ttl).UTC().Truncate(time.Second)
	if err := s.store.StartAuthSession(ctx, u.ID, HashToken(token), expires, action); err != nil {
		return Login{}, err
	}
	return Login{Token: token, ExpiresAt: expires, User: u}, nil
}

// Logout ends the session of token.
func (s *Service) Logout(ctx context.Context, token string) error {
	return s.store.DeleteAuthSession(ctx, HashToken(token))
}

// Authenticate returns the user whose live session token this is.
func (s *Service) Authenticate(ctx context.Context, token string) (agentline.User, error) {
	if token == "" {
		return agentline.User{}, agentline.Errorf(agentline.EUnauthorized, "sign in first: send Authorization: Bearer <token> from POST /api/auth/login")
	}
	u, err := s.store.UserByTokenHash(ctx, HashToken(token))
	if errors.Is(err, agentline.ErrNotFound) {
		return u, agentline.Errorf(agentline.EUnauthorized, "the session token is invalid or expired; sign in again")
	}
	return u, err
}

// Authorize is the one place that decides whether the signed-in user of ctx
// may do perm on the project. A request made with an API key acts in the
// key's project alone, with the key's role (capped by its maker's). A user who is no member gets not_found, so that
// another tenant's objects are never revealed; a member without the
// permission gets forbidden.
func (s *Service) Authorize(ctx context.Context, projectID int64, perm agentline.Permission) (agentline.Role, error) {
	u, ok := UserFrom(ctx)
	if !ok {
		return "", agentline.Errorf(agentline.EUnauthorized, "sign in first")
	}
	k, isKey := APIKeyFrom(ctx)
	if isKey && k.ProjectID != projectID {
		return "", agentline.NotFound("project")
	}
	role, err := s.store.MemberRole(ctx, projectID, u.ID)
	if err != nil {
		return "", err
	}
	if isKey {
		if role, err = keyRole(k, projectID, role); err != nil {
			return "", err
		}
	}
	if !role.Can(perm) {
		return role, refusal(role, perm)
	}
	return role, nil
}

// refusal tells a member what a refused action needs in the words people
// use for roles, not the permission's name (before, "your role editor
// ... does not grant PROJECT:DELETE" told an editor nothing to act on).
func refusal(role agentline.Role, perm agentline.Permission) error {
	if perm == agentline.PermCreate {
		return agentline.Errorf(agentline.EForbidden, "Viewers can only read; creating and changing needs an editor or owner role.")
	}
	return OwnersOnly(role, "delete in this project")
}

// OwnersOnly is the refusal of what only owners may do (deleting, managing
// members), naming the action and the caller's role: "Only owners can
// change roles; you are an editor."
func OwnersOnly(role agentline.Role, action string) error {
	article := "a"
	if strings.HasPrefix(string(role), "e") || strings.HasPrefix(string(role), "o") {
		article = "an"
	}
	return agentline.Errorf(agentline.EForbidden, "Only owners can %s; you are %s %s.", action, article, role)
}

// AuthorizeOwned is Authorize for an object addressed by its own id (an
// agent, a tool, a document ...): it finds the project that owns row id of
// kind, authorizes perm there and returns the project's id. A caller who is
// no member of that project gets the very same not_found as for an object
// that does not exist ("agent not found"), so that the answer never tells
// that another tenant's object exists.
func (s *Service) AuthorizeOwned(ctx context.Context, kind agentline.Kind, id int64, perm agentline.Permission) (int64, error) {
	projectID, err := s.store.ProjectOf(ctx, kind, id)
	if err != nil {
		return 0, err
	}
	return projectID, s.AuthorizeIn(ctx, kind.Noun(), projectID, perm)
}

// AuthorizeIn is Authorize for an object named noun whose project the caller
// found by other means (a call by its SID): a non-member gets "noun not
// found", as for AuthorizeOwned.
func (s *Service) AuthorizeIn(ctx context.Context, noun string, projectID int64, perm agentline.Permission) error {
	_, err := s.Authorize(ctx, projectID, perm)
	if errors.Is(err, agentline.ErrNotFound) {
		return agentline.NotFound(noun)
	}
	return err
}

// NewToken returns prefix followed by 32 random bytes in base64url.
func NewToken(prefix string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// HashToken is how tokens are stored: hex SHA-256.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

type userKey struct{}

// WithUser returns ctx carrying the signed-in user.
func WithUser(ctx context.Context, u agentline.User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the signed-in user of ctx.
func UserFrom(ctx context.Context) (agentline.User, bool) {
	u, ok := ctx.Value(userKey{}).(agentline.User)
	return u, ok
}
