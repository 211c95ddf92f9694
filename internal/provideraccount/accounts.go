// Package provideraccount lets each project bring its own provider
// accounts: an OpenAI-compatible or Gemini-compatible base URL and API key
// that its agents use instead of the deployment's settings. It owns the
// accounts API (/api/projects/{project_id}/providers), the check of a key
// when it is saved, and the resolver every consumer asks for the
// credentials of a project's provider kind (Accounts.Credentials). Keys are
// stored sealed (internal/secretbox) and never leave it but to the
// provider.
package provideraccount

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Store is what accounts need from storage.
type Store interface {
	SaveProviderAccount(ctx context.Context, a agentline.ProviderAccount) (agentline.ProviderAccount, error)
	ProviderAccounts(ctx context.Context, projectID int64) ([]agentline.ProviderAccount, error)
	ProviderAccount(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderAccount, error)
	DeleteProviderAccount(ctx context.Context, projectID int64, kind agentline.Provider) error
}

// Sealer seals and opens keys (a *secretbox.Box; a nil one refuses both,
// saying AGENTLINE_ENCRYPTION_KEY is missing).
type Sealer interface {
	Seal(plaintext, context string) (string, error)
	Open(sealed, context string) (string, error)
}

// Options configures Accounts.
type Options struct {
	Store  Store
	Sealer Sealer
	// Deployment are the deployment's credentials of each kind: what a
	// project without its own account uses.
	Deployment map[agentline.Provider]agentline.ProviderCredentials
	// AllowPrivate lets a base URL name loopback and private addresses
	// (AGENTLINE_ALLOW_PRIVATE_WEBHOOKS), as for webhook URLs.
	AllowPrivate bool
	// Production requires https base URLs.
	Production bool
	// Client checks keys at a base URL a project gave; it must keep to
	// the outgoing address policy (the tool facility's transport does).
	// Keys at the deployment's own base URL, which the operator set, are
	// checked with a plain client.
	Client *http.Client
	// CacheFor is how long a project's credentials are reused before they
	// are read again (default 30 s): an instance that did not make a change
	// sees it within that time.
	CacheFor time.Duration
	Logger   *slog.Logger
	// Tracing, when set (tracing is on), gives the checks of deployment
	// keys a span per request (Client is the caller's to trace).
	Tracing trace.TracerProvider
}

// Accounts resolves and manages projects' provider accounts.
type Accounts struct {
	o       Options
	trusted *http.Client
	now     func() time.Time
	mu      sync.Mutex
	cache   map[cacheKey]cached
}

type cacheKey struct {
	project int64
	kind    agentline.Provider
}

type cached struct {
	creds   agentline.ProviderCredentials
	expires time.Time
}

// maxCached bounds the cache; past it, it starts over.
const maxCached = 10000

// New returns the accounts of o.
func New(o Options) *Accounts {
	if o.CacheFor <= 0 {
		o.CacheFor = 30 * time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	for k, c := range o.Deployment {
		c.BaseURL = strings.TrimSuffix(c.BaseURL, "/")
		o.Deployment[k] = c
	}
	return &Accounts{o: o, trusted: httpx.TracedClient(&http.Client{Timeout: 10 * time.Second}, o.Tracing), now: time.Now, cache: map[cacheKey]cached{}}
}

// Credentials are the base URL and key the project's agents of kind use:
// its own account's, or the deployment's when it has none (an empty
// APIKey then means none is configured). They are read at a session's or
// call's start, and kept CacheFor so a burst of starts reads once.
func (a *Accounts) Credentials(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error) {
	k := cacheKey{projectID, kind}
	now := a.now()
	a.mu.Lock()
	c, ok := a.cache[k]
	a.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.creds, nil
	}
	creds, err := a.load(ctx, projectID, kind)
	if err != nil {
		return agentline.ProviderCredentials{}, err
	}
	a.mu.Lock()
	if len(a.cache) >= maxCached {
		clear(a.cache)
	}
	a.cache[k] = cached{creds: creds, expires: now.Add(a.o.CacheFor)}
	a.mu.Unlock()
	return creds, nil
}

func (a *Accounts) load(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error) {
	acc, err := a.o.Store.ProviderAccount(ctx, projectID, kind)
	if agentline.ErrorCode(err) == agentline.ENotFound {
		return a.o.Deployment[kind], nil
	}
	if err != nil {
		return agentline.ProviderCredentials{}, err
	}
	key, err := a.o.Sealer.Open(acc.SealedKey, agentline.ProviderKeyContext(projectID, kind))
	if err != nil {
		return agentline.ProviderCredentials{}, &agentline.Error{Code: agentline.ENotConfigured,
			Message: "the project's " + string(kind) + " provider account cannot be read: its key does not open with AGENTLINE_ENCRYPTION_KEY", Err: err}
	}
	return agentline.ProviderCredentials{BaseURL: acc.BaseURL, APIKey: key, Project: true}, nil
}

// forget drops what the cache holds of the project's kind, after a change.
func (a *Accounts) forget(projectID int64, kind agentline.Provider) {
	a.mu.Lock()
	delete(a.cache, cacheKey{projectID, kind})
	a.mu.Unlock()
}
