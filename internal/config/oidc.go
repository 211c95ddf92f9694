package config

import (
	"fmt"
	"net/url"
	"strings"
)

// OIDC is single sign-on with an OpenID Connect provider; it is on when
// Issuer is set.
type OIDC struct {
	Issuer            string // AGENTLINE_OIDC_ISSUER
	ClientID          string // AGENTLINE_OIDC_CLIENT_ID
	ClientSecret      string // AGENTLINE_OIDC_CLIENT_SECRET
	AllowedDomainList string // AGENTLINE_OIDC_ALLOWED_DOMAINS; see AllowedDomains
	Only              bool   // AGENTLINE_OIDC_ONLY
}

// Enabled reports whether single sign-on is configured.
func (o OIDC) Enabled() bool { return o.Issuer != "" }

// AllowedDomains is the allowed email domains, lowercased, without a
// leading "@"; empty allows every domain.
func (o OIDC) AllowedDomains() []string {
	var out []string
	for _, d := range strings.Split(o.AllowedDomainList, ",") {
		if d = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@")); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// oidcErrors refuses a half-configured single sign-on at start: an issuer
// that is no absolute https URL (http only on loopback, for tests and
// local providers), a missing client ID or secret, or AGENTLINE_OIDC_ONLY
// without a provider, which would leave only administrators able to sign
// in.
func (c *Config) oidcErrors() []error {
	o := c.OIDC
	if !o.Enabled() {
		if o.Only || o.ClientID != "" || o.ClientSecret != "" || o.AllowedDomainList != "" {
			return []error{fmt.Errorf("AGENTLINE_OIDC_CLIENT_ID, _CLIENT_SECRET, _ALLOWED_DOMAINS and _ONLY need AGENTLINE_OIDC_ISSUER")}
		}
		return nil
	}
	var errs []error
	u, err := url.Parse(o.Issuer)
	loopback := err == nil && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1" || u.Hostname() == "::1")
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback)) {
		errs = append(errs, fmt.Errorf("AGENTLINE_OIDC_ISSUER must be an https:// URL (http:// only on loopback), not %q", o.Issuer))
	}
	if o.ClientID == "" {
		errs = append(errs, fmt.Errorf("AGENTLINE_OIDC_CLIENT_ID is required with AGENTLINE_OIDC_ISSUER"))
	}
	if o.ClientSecret == "" {
		errs = append(errs, fmt.Errorf("AGENTLINE_OIDC_CLIENT_SECRET is required with AGENTLINE_OIDC_ISSUER"))
	}
	for _, d := range o.AllowedDomains() {
		if strings.ContainsAny(d, "@/ ") || !strings.Contains(d, ".") {
			errs = append(errs, fmt.Errorf("AGENTLINE_OIDC_ALLOWED_DOMAINS: %q is not an email domain", d))
		}
	}
	if c.PublicURL == "" {
		errs = append(errs, fmt.Errorf("AGENTLINE_PUBLIC_URL is required with AGENTLINE_OIDC_ISSUER: the provider redirects back to it"))
	}
	return errs
}
