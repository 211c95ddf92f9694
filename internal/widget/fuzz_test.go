package widget

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
)

// FuzzOriginMatch feeds an allowed_origins entry and an Origin header to the
// entry's validation and to the match. Properties: nothing panics; a valid
// entry is canonical (normalizing it again changes nothing); an exact entry
// matches only its own origin; a wildcard *.D matches only subdomains of D
// on the default port, and never D itself, evil-D, D.evil.io or the null
// origin.
func FuzzOriginMatch(f *testing.F) {
	seeds := [][2]string{
		{"*.example.com", "https://example.com"},
		{"*.example.com", "https://evil-example.com"},
		{"*.example.com", "https://a.example.com"},
		{"*.example.com", "https://a.b.example.com:443"},
		{"*.example.com", "https://a.example.com:8443"},
		{"*.example.com", "https://example.com.evil.io"},
		{"*.example.com", "https://a.example.com."},
		{"*.example.com", "null"},
		{"https://shop.example.com", "https://shop.example.com:443"},
		{"https://shop.example.com", "HTTPS://SHOP.EXAMPLE.COM"},
		{"https://shop.example.com", "https://shop.example.com/"},
		{"https://shop.example.com", "https://shop.example.com@evil.io"},
		{"http://localhost:3000", "http://localhost:3000"},
		{"http://[::1]:8080", "http://[::1]:8080"},
		{"http://[::1]", "http://[::1]:80"},
		{"*.localhost", "http://a.localhost"},
		{"*", "https://a.example.com"},
		{"", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, entry, header string) {
		list, err := normalizeOrigins([]string{entry})
		if err != nil {
			if !originAllowed(nil, header) {
				t.Fatal("an empty list must allow every origin")
			}
			return
		}
		canon := list[0]
		if again, err := normalizeOrigins(list); err != nil || again[0] != canon {
			t.Fatalf("normalizing %q again gave %q, %v", canon, again, err)
		}
		allowed := originAllowed(list, header)
		if allowed && (header == "" || header == "null") {
			t.Fatalf("%q allowed %q", canon, header)
		}
		o, parsed := parseOrigin(header)
		if allowed && !parsed {
			t.Fatalf("%q allowed %q, which is not an origin", canon, header)
		}
		domain, wildcard := strings.CutPrefix(canon, "*.")
		if !wildcard {
			if allowed != (parsed && o.String() == canon) {
				t.Fatalf("exact entry %q: allowed(%q) = %v", canon, header, allowed)
			}
			return
		}
		if allowed && (o.port != "" || !strings.HasSuffix(o.host, "."+domain)) {
			t.Fatalf("%q allowed %q", canon, header)
		}
		for _, never := range []string{"https://" + domain, "http://" + domain, "https://evil-" + domain,
			"https://evil" + domain, "https://" + domain + ".evil.io", "https://a." + domain + ":8443"} {
			if originAllowed(list, never) {
				t.Fatalf("%q allowed %q", canon, never)
			}
		}
		if len(domain) <= 251 && !originAllowed(list, "https://a."+domain) {
			t.Fatalf("%q did not allow a subdomain", canon)
		}
	})
}

// FuzzParseKey feeds an X-API-Key value to the key checks of every widget
// request: the shape test, the hash and the cached lookup by hash, with one
// real key stored. Properties: nothing panics; only well-formed values
// (svc_pk_ and 40 base62 characters) reach the lookup; a value finds the
// stored key exactly when it is that key; anything else is invalid_key.
func FuzzParseKey(f *testing.F) {
	real, prefix, err := newKey()
	if err != nil {
		f.Fatal(err)
	}
	stored := agentline.WidgetKey{ID: 7, ChannelID: 3, ProjectID: 1, Prefix: prefix}
	for _, s := range []string{real, prefix, "", agentline.WidgetKeyPrefix, real[:len(real)-1], real + "x",
		strings.ToUpper(real), "svc_pk_" + strings.Repeat("0", keyRandomLength), "svc_pk_" + strings.Repeat("é", 20),
		"Bearer " + real, " " + real, real[:20] + "\x00" + real[21:]} {
		f.Add(s)
	}
	realHash := hashKey(real)
	f.Fuzz(func(t *testing.T, raw string) {
		well := wellFormedKey(raw)
		if well != (len(raw) == len(real) && strings.HasPrefix(raw, agentline.WidgetKeyPrefix) &&
			strings.Trim(raw[len(agentline.WidgetKeyPrefix):], agentline.Base62) == "") {
			t.Fatalf("wellFormedKey(%q) = %v", raw, well)
		}
		if !well {
			return
		}
		h := hashKey(raw)
		if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			t.Fatalf("hash %q is not 64 lower-case hex digits", h)
		}
		lookups := 0
		cache := newKeyCache(func(_ context.Context, hash string) (agentline.WidgetKey, error) {
			lookups++
			if hash == realHash {
				return stored, nil
			}
			return agentline.WidgetKey{}, agentline.NotFound("widget key")
		}, time.Minute)
		k, err := cache.get(context.Background(), h)
		switch {
		case raw == real && (err != nil || k.ID != stored.ID):
			t.Fatalf("the real key: %+v, %v", k, err)
		case raw != real && agentline.ErrorCode(err) != agentline.EInvalidKey:
			t.Fatalf("%q: %+v, %v; want invalid_key", raw, k, err)
		case lookups != 1:
			t.Fatalf("%d lookups, want 1", lookups)
		}
	})
}
