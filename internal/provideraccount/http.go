package provideraccount

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// maxKeyLength bounds an API key (real ones are well under 200).
const maxKeyLength = 512

// Handler serves the accounts API.
type Handler struct {
	accounts *Accounts
	auth     *auth.Service
}

// NewHandler returns the accounts API over accounts.
func NewHandler(accounts *Accounts, a *auth.Service) *Handler {
	return &Handler{accounts: accounts, auth: a}
}

// Routes lists the routes of the accounts API.
func (h *Handler) Routes() []httpx.Route {
	m := h.auth.Route
	return []httpx.Route{
		m("GET", "/api/projects/{project_id}/providers", h.list),
		m("GET", "/api/projects/{project_id}/providers/{kind}", h.get),
		m("PUT", "/api/projects/{project_id}/providers/{kind}", h.put),
		m("DELETE", "/api/projects/{project_id}/providers/{kind}", h.delete),
	}
}

// pathKind is the path's provider kind; another is not found.
func pathKind(r *http.Request) (agentline.Provider, error) {
	switch k := agentline.Provider(r.PathValue("kind")); k {
	case agentline.ProviderOpenAI, agentline.ProviderGemini:
		return k, nil
	}
	return "", agentline.NotFound("provider kind (openai or gemini)")
}

// list answers the project's accounts, at most one per kind, as a bare
// array: key_last4, never the key.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.accounts.o.Store.ProviderAccounts(r.Context(), projectID)
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(a agentline.ProviderAccount) listing.Cursor { return listing.Cursor{ID: string(a.Kind)} })
}

// get answers the project's account of the path's kind; 404 when the
// project uses the deployment's.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	kind, err := pathKind(r)
	if err != nil {
		return err
	}
	a, err := h.accounts.o.Store.ProviderAccount(r.Context(), projectID, kind)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

type accountInput struct {
	APIKey  string `json:"api_key"`
	BaseURL string `json:"base_url"`
}

// put sets the project's account of the path's kind, owners only: the key
// is checked with the provider first, then sealed and stored.
func (h *Handler) put(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	kind, err := pathKind(r)
	if err != nil {
		return err
	}
	var in accountInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	a, err := h.accounts.Save(r.Context(), projectID, kind, in.APIKey, in.BaseURL)
	if err != nil {
		return err
	}
	httpx.Logger(r.Context()).Info("provider account saved", "project_id", projectID, "kind", kind, "base_url", a.BaseURL, "key_last4", a.KeyLast4)
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

// delete removes the project's account of the path's kind: its agents use
// the deployment's again.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	kind, err := pathKind(r)
	if err != nil {
		return err
	}
	if err := h.accounts.o.Store.DeleteProviderAccount(r.Context(), projectID, kind); err != nil {
		return err
	}
	h.accounts.forget(projectID, kind)
	httpx.NoContent(w)
	return nil
}

// Save checks key and baseURL ("" is the deployment's base URL of kind),
// then seals and stores the project's account.
func (a *Accounts) Save(ctx context.Context, projectID int64, kind agentline.Provider, key, baseURL string) (agentline.ProviderAccount, error) {
	key = strings.TrimSpace(key)
	if key == "" || len(key) > maxKeyLength || strings.IndexFunc(key, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsPrint(r) || r == ' ' }) >= 0 {
		return agentline.ProviderAccount{}, agentline.Invalid("api_key", "api_key must be the provider's API key: printable ASCII without spaces, at most %d characters", maxKeyLength)
	}
	base, err := a.checkBaseURL(kind, baseURL)
	if err != nil {
		return agentline.ProviderAccount{}, err
	}
	// Without an encryption key nothing is sent to the provider: say so first.
	if _, err := a.o.Sealer.Seal("", ""); err != nil {
		return agentline.ProviderAccount{}, err
	}
	if err := a.checkKey(ctx, kind, agentline.ProviderCredentials{BaseURL: base, APIKey: key}); err != nil {
		return agentline.ProviderAccount{}, err
	}
	sealed, err := a.o.Sealer.Seal(key, agentline.ProviderKeyContext(projectID, kind))
	if err != nil {
		return agentline.ProviderAccount{}, err
	}
	last4 := ""
	if len(key) >= 8 {
		last4 = key[len(key)-4:]
	}
	acc, err := a.o.Store.SaveProviderAccount(ctx, agentline.ProviderAccount{ProjectID: projectID, Kind: kind, BaseURL: base, SealedKey: sealed, KeyLast4: last4})
	a.forget(projectID, kind)
	return acc, err
}

// checkBaseURL is the account's base URL without a trailing slash: the
// deployment's when raw is empty (trusted as the operator set it), else one
// the outgoing address policy allows, https in production, with no query
// or fragment.
func (a *Accounts) checkBaseURL(kind agentline.Provider, raw string) (string, error) {
	raw = strings.TrimSuffix(strings.TrimSpace(raw), "/")
	if d := a.o.Deployment[kind].BaseURL; d != "" && (raw == "" || raw == d) {
		return d, nil
	}
	if raw == "" {
		return "", agentline.Invalid("base_url", "base_url is required: this server has no default for the %s provider", providerName(kind))
	}
	if len(raw) > 2048 {
		return "", agentline.Invalid("base_url", "base_url must be at most 2048 characters")
	}
	if err := egress.CheckURL("base_url", raw, a.o.AllowPrivate); err != nil {
		return "", err
	}
	u, _ := url.Parse(raw) // parsed by CheckURL
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", agentline.Invalid("base_url", "base_url must not carry a query or fragment, such as https://api.openai.com")
	}
	if a.o.Production && u.Scheme != "https" {
		return "", agentline.Invalid("base_url", "base_url must be an https URL in production")
	}
	return raw, nil
}
