package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// OIDCConfig is single sign-on with one OpenID Connect provider.
type OIDCConfig struct {
	Issuer, ClientID, ClientSecret string
	// RedirectURL is the console's callback as the provider knows it:
	// the public URL followed by OIDCCallbackPath.
	RedirectURL string
	// AllowedDomains are the email domains that may sign in; empty
	// allows every one.
	AllowedDomains []string
	// Only refuses passwords for everyone but instance administrators.
	Only bool
	// Client reaches the provider; nil is http.DefaultClient.
	Client *http.Client
}

// OIDCStore is what single sign-on needs from storage: the accounts of
// identities, and the sign-ins under way, which every instance shares so
// that the provider's callback may reach any of them.
type OIDCStore interface {
	OIDCSignIn(ctx context.Context, issuer, subject, email string, create bool) (agentline.User, bool, error)
	CreateOIDCSignIn(ctx context.Context, stateHash, bindingHash string, expires time.Time) error
	TakeOIDCSignIn(ctx context.Context, stateHash string) (bindingHash string, expires time.Time, err error)
	PruneOIDCSignIns(ctx context.Context, before time.Time) (int64, error)
}

// Paths of the sign-in with the provider.
const (
	OIDCStartPath    = "/api/auth/oidc/start"
	OIDCCallbackPath = "/api/auth/oidc/callback"
	// flowCookie binds a sign-in's state to the browser that started it.
	flowCookie = "agentline_oidc"
	// flowTTL is how long a visitor has at the provider.
	flowTTL = 10 * time.Minute
	// flowKept is how long an expired sign-in's row stays, so that its
	// late callback is told it expired rather than that it is unknown.
	flowKept = flowTTL
	// pruneEvery is how often an instance that starts sign-ins deletes
	// the expired ones: starts cost a row each, so a flood of them
	// leaves at most flowTTL+flowKept+pruneEvery of rows behind.
	pruneEvery = time.Minute
)

// flow is the secrets of one sign-in under way, derived from its state and
// the browser's binding (never stored).
type flow struct {
	nonce, verifier string
}

// deriveFlow returns the nonce and PKCE verifier of the sign-in of state in
// the browser holding binding, an HMAC of each: they need no storage, and
// only the browser's HttpOnly cookie (which neither the provider, nor a
// reader of the redirect, nor the database sees) can remake them.
func deriveFlow(state, binding string) flow {
	mac := func(what string) string {
		m := hmac.New(sha256.New, []byte(binding))
		m.Write([]byte(what + "\x00" + state))
		return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	return flow{nonce: mac("nonce"), verifier: mac("pkce-verifier")}
}

// SSO signs people in through an OpenID Connect provider with the
// authorization code flow, PKCE (S256), state and nonce.
type SSO struct {
	cfg   OIDCConfig
	svc   *Service
	store OIDCStore
	name  string

	mu       sync.Mutex
	provider *oidc.Provider // discovered on first use, then kept
	pruned   time.Time      // when this instance last pruned sign-ins
}

// NewSSO returns single sign-on for cfg. The provider is discovered on the
// first sign-in (and again after a failure), so agentline starts while its
// provider is down.
func NewSSO(svc *Service, store OIDCStore, cfg OIDCConfig) *SSO {
	return &SSO{cfg: cfg, svc: svc, store: store, name: ProviderName(cfg.Issuer)}
}

// Name is the provider's name on the sign-in button.
func (s *SSO) Name() string { return s.name }

// ProviderName names well-known providers by their issuer's host, and
// others by the host itself.
func ProviderName(issuer string) string {
	u, err := url.Parse(issuer)
	if err != nil || u.Hostname() == "" {
		return "single sign-on"
	}
	host := u.Hostname()
	for suffix, name := range map[string]string{"accounts.google.com": "Google", "okta.com": "Okta",
		"login.microsoftonline.com": "Microsoft", "auth0.com": "Auth0", "gitlab.com": "GitLab"} {
		if host == suffix || strings.HasSuffix(host, "."+suffix) {
			return name
		}
	}
	if strings.Contains(u.Path, "/realms/") {
		return "Keycloak"
	}
	return host
}

func (s *SSO) ctx(ctx context.Context) context.Context {
	if s.cfg.Client != nil {
		return oidc.ClientContext(ctx, s.cfg.Client)
	}
	return ctx
}

// discover returns the provider, reading its discovery document once.
func (s *SSO) discover(ctx context.Context) (*oidc.Provider, error) {
	s.mu.Lock()
	p := s.provider
	s.mu.Unlock()
	if p != nil {
		return p, nil
	}
	// The provider's key set outlives this request: it refetches the
	// JWKS when a token names an unknown key (rotation).
	p, err := oidc.NewProvider(s.ctx(context.WithoutCancel(ctx)), s.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery: %w", err)
	}
	s.mu.Lock()
	s.provider = p
	s.mu.Unlock()
	return p, nil
}

func (s *SSO) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: s.cfg.ClientID, ClientSecret: s.cfg.ClientSecret, RedirectURL: s.cfg.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// Start begins a sign-in: it stores a new sign-in under way under a fresh
// state and returns the provider's authorization URL and the browser's
// binding.
func (s *SSO) Start(ctx context.Context) (authURL, binding string, err error) {
	p, err := s.discover(ctx)
	if err != nil {
		return "", "", err
	}
	state, err1 := NewToken("")
	binding, err2 := NewToken("")
	if err := errors.Join(err1, err2); err != nil {
		return "", "", err
	}
	now := s.svc.now()
	s.prune(ctx, now)
	if err := s.store.CreateOIDCSignIn(ctx, HashToken(state), HashToken(binding), now.Add(flowTTL)); err != nil {
		return "", "", err
	}
	f := deriveFlow(state, binding)
	return s.oauth(p).AuthCodeURL(state, oidc.Nonce(f.nonce), oauth2.S256ChallengeOption(f.verifier)), binding, nil
}

// prune deletes the sign-ins that expired flowKept ago, at most once per
// pruneEvery on this instance. A failure is logged: it costs only rows.
func (s *SSO) prune(ctx context.Context, now time.Time) {
	s.mu.Lock()
	due := now.Sub(s.pruned) >= pruneEvery
	if due {
		s.pruned = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if _, err := s.store.PruneOIDCSignIns(ctx, now.Add(-flowKept)); err != nil {
		httpx.Logger(ctx).Warn("single sign-on: prune sign-ins under way", "err", err)
	}
}

// take uses up the sign-in of state, which must be bound to binding: a
// state works once, on any instance, in the browser that started it, within
// flowTTL. Each refusal says which of these failed.
func (s *SSO) take(ctx context.Context, state, binding string) (flow, error) {
	if state == "" {
		return flow{}, refuse("This sign-in link is incomplete (it has no state). Start again from the sign-in page.")
	}
	bound, expires, err := s.store.TakeOIDCSignIn(ctx, HashToken(state))
	switch {
	case agentline.ErrorCode(err) == agentline.ENotFound:
		return flow{}, refuse("This sign-in link has been used already, or was not made by this agentline. Start again from the sign-in page.")
	case err != nil:
		return flow{}, err
	case s.svc.now().After(expires):
		return flow{}, refuse("This sign-in expired: it must be finished within %d minutes of starting it. Start again from the sign-in page.", int(flowTTL.Minutes()))
	case subtle.ConstantTimeCompare([]byte(bound), []byte(HashToken(binding))) != 1:
		return flow{}, refuse("This sign-in was started in another browser (or its cookie was refused). Start again from the sign-in page, in this browser.")
	}
	return deriveFlow(state, binding), nil
}

// Refusal is a sign-in the provider's answer does not allow; its message
// is for the person signing in.
type Refusal struct {
	Message string
	// Cause is what the log says beyond the message (a verification
	// error); nil when the message says it all.
	Cause error
}

func (r *Refusal) Error() string { return r.Message }

func refuse(format string, args ...any) error { return &Refusal{Message: fmt.Sprintf(format, args...)} }

// SSOLogin is a finished sign-in and what the log says about it.
type SSOLogin struct {
	Login
	Subject string
	Created bool
}
