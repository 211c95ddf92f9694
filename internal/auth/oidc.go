package auth

import (
	"context"
	"crypto/subtle"
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

// OIDCStore is what single sign-on needs from storage.
type OIDCStore interface {
	OIDCSignIn(ctx context.Context, issuer, subject, email string, create bool) (agentline.User, bool, error)
}

// Paths of the sign-in with the provider.
const (
	OIDCStartPath    = "/api/auth/oidc/start"
	OIDCCallbackPath = "/api/auth/oidc/callback"
	// flowCookie binds a sign-in's state to the browser that started it.
	flowCookie = "agentline_oidc"
	// flowTTL is how long a visitor has at the provider.
	flowTTL = 10 * time.Minute
	// maxFlows bounds the sign-ins under way, so that a flood of starts
	// cannot fill the memory; the oldest are forgotten first.
	maxFlows = 10000
)

// flow is one sign-in under way, kept server-side under its state: its
// nonce, PKCE verifier and the hash of the browser's binding cookie.
type flow struct {
	nonce, verifier, binding string
	expires                  time.Time
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
	flows    map[string]flow
}

// NewSSO returns single sign-on for cfg. The provider is discovered on the
// first sign-in (and again after a failure), so agentline starts while its
// provider is down.
func NewSSO(svc *Service, store OIDCStore, cfg OIDCConfig) *SSO {
	return &SSO{cfg: cfg, svc: svc, store: store, name: ProviderName(cfg.Issuer), flows: map[string]flow{}}
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

// Start begins a sign-in: it keeps a new flow under a fresh state and
// returns the provider's authorization URL and the browser's binding.
func (s *SSO) Start(ctx context.Context) (authURL, binding string, err error) {
	p, err := s.discover(ctx)
	if err != nil {
		return "", "", err
	}
	state, err1 := NewToken("")
	nonce, err2 := NewToken("")
	binding, err3 := NewToken("")
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", "", err
	}
	verifier := oauth2.GenerateVerifier()
	now := s.svc.now()
	s.mu.Lock()
	s.prune(now)
	s.flows[state] = flow{nonce: nonce, verifier: verifier, binding: HashToken(binding), expires: now.Add(flowTTL)}
	s.mu.Unlock()
	return s.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), binding, nil
}

// prune forgets expired flows and, past maxFlows, any; s.mu is held.
func (s *SSO) prune(now time.Time) {
	for k, f := range s.flows {
		if now.After(f.expires) || len(s.flows) >= maxFlows {
			delete(s.flows, k)
		}
	}
}

// take uses up the flow of state, which must be bound to binding: a state
// works once, in the browser that started it, within flowTTL.
func (s *SSO) take(state, binding string) (flow, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.flows[state]
	delete(s.flows, state)
	if !ok || s.svc.now().After(f.expires) {
		return f, false
	}
	return f, subtle.ConstantTimeCompare([]byte(f.binding), []byte(HashToken(binding))) == 1
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
