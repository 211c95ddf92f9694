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
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentline/agentline"
)

// Store is what auth needs from storage.
type Store interface {
	CreateUser(ctx context.Context, email, passwordHash string) (agentline.User, error)
	UserByEmail(ctx context.Context, email string) (agentline.User, string, error)
	CreateAuthSession(ctx context.Context, userID int64, tokenHash string, expiresAt time.Time) error
	UserByTokenHash(ctx context.Context, tokenHash string) (agentline.User, error)
	DeleteAuthSession(ctx context.Context, tokenHash string) error
	MemberRole(ctx context.Context, projectID, userID int64) (agentline.Role, error)
	ProjectOf(ctx context.Context, kind agentline.Kind, id int64) (int64, error)
	InviteStore
}

// Service signs users in and authorizes their requests.
type Service struct {
	store    Store
	ttl      time.Duration
	throttle *throttle
	now      func() time.Time
	cost     int
	// dummyHash is compared against when the email is unknown, so that a
	// failed login takes as long whichever part was wrong. It is made on
	// first use, at the service's cost.
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

// New returns a Service whose sign-ins last ttl.
func New(store Store, ttl time.Duration, opts ...Option) *Service {
	s := &Service{store: store, ttl: ttl, throttle: newThrottle(), now: time.Now, cost: bcrypt.DefaultCost}
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
// same thing; repeated failures for one email or one client IP are refused
// with rate_limited until the window passes.
func (s *Service) Login(ctx context.Context, email, password, clientIP string) (Login, error) {
	keys := []string{"email:" + strings.ToLower(strings.TrimSpace(email)), "ip:" + clientIP}
	if wait := s.throttle.blocked(keys, s.now()); wait > 0 {
		return Login{}, &agentline.Error{Code: agentline.ERateLimited, RetryAfter: int(wait.Seconds()) + 1,
			Message: "too many failed sign-ins; try again later"}
	}
	u, hash, err := s.store.UserByEmail(ctx, email)
	if err != nil && !errors.Is(err, agentline.ErrNotFound) {
		return Login{}, err
	}
	if err != nil {
		bcrypt.CompareHashAndPassword(s.dummy(), []byte(password))
		s.throttle.fail(keys, s.now())
		return Login{}, errBadLogin
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		s.throttle.fail(keys, s.now())
		return Login{}, errBadLogin
	}
	s.throttle.reset(keys[0])
	token, err := NewToken("als_")
	if err != nil {
		return Login{}, err
	}
	expires := s.now().Add(s.ttl).UTC().Truncate(time.Second)
	if err := s.store.CreateAuthSession(ctx, u.ID, HashToken(token), expires); err != nil {
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
// may do perm on the project. A user who is no member gets not_found, so that
// another tenant's objects are never revealed; a member without the
// permission gets forbidden.
func (s *Service) Authorize(ctx context.Context, projectID int64, perm agentline.Permission) (agentline.Role, error) {
	u, ok := UserFrom(ctx)
	if !ok {
		return "", agentline.Errorf(agentline.EUnauthorized, "sign in first")
	}
	role, err := s.store.MemberRole(ctx, projectID, u.ID)
	if err != nil {
		return "", err
	}
	if !role.Can(perm) {
		return role, agentline.Errorf(agentline.EForbidden, "your role %s in this project does not grant %s", role, perm)
	}
	return role, nil
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
