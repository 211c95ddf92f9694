package config

import (
	"strings"
	"testing"
)

func TestOIDCSettings(t *testing.T) {
	full := map[string]string{"AGENTLINE_OIDC_ISSUER": "https://accounts.google.com", "AGENTLINE_OIDC_CLIENT_ID": "id",
		"AGENTLINE_OIDC_CLIENT_SECRET": "secret", "AGENTLINE_PUBLIC_URL": "https://voice.example.com"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range full {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"off", map[string]string{}, ""},
		{"full", full, ""},
		{"loopback http", with("AGENTLINE_OIDC_ISSUER", "http://127.0.0.1:9000"), ""},
		{"plain http", with("AGENTLINE_OIDC_ISSUER", "http://sso.example.com"), "must be an https:// URL"},
		{"no client", with("AGENTLINE_OIDC_CLIENT_ID", ""), "AGENTLINE_OIDC_CLIENT_ID is required"},
		{"no secret", with("AGENTLINE_OIDC_CLIENT_SECRET", ""), "AGENTLINE_OIDC_CLIENT_SECRET is required"},
		{"no public URL", with("AGENTLINE_PUBLIC_URL", ""), "AGENTLINE_PUBLIC_URL is required"},
		{"bad domain", with("AGENTLINE_OIDC_ALLOWED_DOMAINS", "example.com, @bad"), `"bad" is not an email domain`},
		{"only without issuer", map[string]string{"AGENTLINE_OIDC_ONLY": "true"}, "need AGENTLINE_OIDC_ISSUER"},
	} {
		c, err := Load(nil, func(k string) string { return tc.env[k] })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		case tc.want == "" && tc.name == "full" && !c.OIDC.Enabled():
			t.Errorf("full: not enabled")
		}
	}
	c := Config{OIDC: OIDC{AllowedDomainList: " Example.com, @acme.io ,"}}
	if got := strings.Join(c.OIDC.AllowedDomains(), " "); got != "example.com acme.io" {
		t.Errorf("AllowedDomains = %q", got)
	}
}
