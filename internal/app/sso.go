package app

import (
	"net/http"
	"strings"
	"time"

	"github.com/agentline/agentline/internal/auth"
)

// sso is single sign-on through AGENTLINE_OIDC_ISSUER, or nil when it is
// not set. The provider redirects back to AGENTLINE_PUBLIC_URL's callback.
func (a *App) sso() *auth.SSO {
	o := a.Config.OIDC
	if !o.Enabled() {
		return nil
	}
	return auth.NewSSO(a.Auth, a.Store, auth.OIDCConfig{
		Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		RedirectURL:    strings.TrimSuffix(a.Config.PublicURL, "/") + auth.OIDCCallbackPath,
		AllowedDomains: o.AllowedDomains(), Only: o.Only,
		Client: &http.Client{Timeout: 15 * time.Second},
	})
}
