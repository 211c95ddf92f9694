package widget

import (
	"testing"

	"github.com/agentline/agentline"
)

func TestOriginAllowed(t *testing.T) {
	list := []string{"https://shop.example.com", "*.example.org", "http://localhost:3000"}
	tests := []struct {
		name, origin string
		want         bool
	}{
		{"exact match", "https://shop.example.com", true},
		{"exact match, default port spelled out", "https://shop.example.com:443", true},
		{"exact entry, other subdomain", "https://www.example.com", false},
		{"wildcard, one level", "https://a.example.org", true},
		{"wildcard, two levels", "https://a.b.example.org", true},
		{"wildcard, http", "http://a.example.org", true},
		{"wildcard never matches the apex", "https://example.org", false},
		{"suffix without dot boundary", "https://evil-example.org", false},
		{"suffix attack", "https://example.org.evil.io", false},
		{"subdomain of suffix attack", "https://a.example.org.evil.io", false},
		{"other scheme", "http://shop.example.com", false},
		{"other port", "https://shop.example.com:8443", false},
		{"wildcard, other port", "https://a.example.org:8443", false},
		{"localhost with port", "http://localhost:3000", true},
		{"localhost other port", "http://localhost:3001", false},
		{"missing Origin", "", false},
		{"null origin", "null", false},
		{"not an origin", "shop.example.com", false},
		{"origin with path", "https://shop.example.com/x", false},
		{"origin with user info", "https://a@shop.example.com", false},
		{"uppercase host", "https://SHOP.example.com", true},
		{"ftp scheme", "ftp://shop.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := originAllowed(list, tt.origin); got != tt.want {
				t.Fatalf("originAllowed(%q) = %v, want %v", tt.origin, got, tt.want)
			}
		})
	}
	// An empty list allows everything, even no Origin at all.
	for _, o := range []string{"", "https://any.where", "null"} {
		if !originAllowed(nil, o) {
			t.Fatalf("empty list refused %q", o)
		}
	}
}

func TestNormalizeOrigins(t *testing.T) {
	got, err := normalizeOrigins([]string{"HTTPS://Shop.Example.com:443/", "*.Example.org", "http://localhost:3000", "https://shop.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://shop.example.com", "*.example.org", "http://localhost:3000"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	bad := []string{"", "*", "null", "example.com", "*.com.", "*.", "*.com", "https://", "https://a.com/path", "https://a.com?x", "ftp://a.com",
		"https://a.com:99999", "https://user@a.com", "*.exa mple.com", "https://a_b.com", "*.*.example.com"}
	for _, b := range bad {
		_, err := normalizeOrigins([]string{"https://ok.example.com", b})
		if agentline.ErrorCode(err) != agentline.EInvalid {
			t.Fatalf("%q: err = %v", b, err)
		}
		if e := err.(*agentline.Error); e.Field != "allowed_origins[1]" {
			t.Fatalf("%q: field = %q", b, e.Field)
		}
	}
}
