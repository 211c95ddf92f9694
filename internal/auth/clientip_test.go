package auth_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// loginFrom signs in, in process, as if the TCP peer were peer and the
// request carried headers; it returns the status.
type loginFrom func(peer string, headers map[string]string, email string) int

// proxied serves the sign-in route behind an edge that trusts the proxies
// in trusted, in process, so that a request may come from any peer address.
func proxied(t *testing.T, trusted ...string) loginFrom {
	t.Helper()
	svc := auth.New(storetest.Open(t, store.SQLite), ttl, auth.WithPasswordCost(bcrypt.MinCost))
	mux := http.NewServeMux()
	for _, r := range auth.NewHandler(svc, auth.Features{}).Routes() {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	edge := httpx.NewEdge(slog.New(slog.NewTextHandler(io.Discard, nil)), 1<<20, prometheus.NewRegistry())
	for _, p := range trusted {
		edge.TrustedProxies = append(edge.TrustedProxies, netip.MustParsePrefix(p))
	}
	h := edge.Wrap(mux)
	return func(peer string, headers map[string]string, email string) int {
		req := httptest.NewRequest("POST", "/api/auth/login", strings.NewReader(`{"email":"`+email+`","password":"wrong-pass"}`))
		req.RemoteAddr = peer
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
}

// exhaust fails 20 sign-ins (the per-IP limit) with distinct emails, so
// that only the per-IP count can refuse the next one.
func exhaust(t *testing.T, login loginFrom, peer func(i int) string, headers func(i int) map[string]string) {
	t.Helper()
	for i := range 20 {
		if status := login(peer(i), headers(i), fmt.Sprintf("guess%d@example.com", i)); status != 401 {
			t.Fatalf("failure %d = %d, want 401", i+1, status)
		}
	}
}

// Behind a trusted proxy, each client the proxy forwards counts on its own:
// one guessing passwords does not lock out the others.
func TestThrottleBehindTrustedProxy(t *testing.T) {
	login := proxied(t, "10.0.0.0/8")
	proxy := func(int) string { return "10.0.0.2:41000" }
	exhaust(t, login, proxy, func(int) map[string]string { return map[string]string{"X-Forwarded-For": "198.51.100.7"} })
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"same client", map[string]string{"X-Forwarded-For": "198.51.100.7"}, 429},
		{"another client", map[string]string{"X-Forwarded-For": "198.51.100.8"}, 401},
		// The client wrote the left part; the proxy appended what it saw.
		{"client-written prefix", map[string]string{"X-Forwarded-For": "203.0.113.99, 198.51.100.7"}, 429},
		{"behind two trusted proxies", map[string]string{"X-Forwarded-For": "198.51.100.7, 10.1.2.3"}, 429},
		{"Forwarded", map[string]string{"Forwarded": "for=198.51.100.7;proto=https"}, 429},
		{"Forwarded, other client", map[string]string{"Forwarded": `for="[2001:db8::1]:4711"`}, 401},
		// No header from the proxy: the proxy is the client.
		{"no header", nil, 401},
	} {
		if got := login("10.0.0.2:41000", tc.headers, "next@example.com"); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
}

// From a peer that is no trusted proxy, forwarding headers are ignored:
// a client cannot escape the throttle by writing a new address each time.
func TestForwardedHeadersFromUntrustedPeersAreIgnored(t *testing.T) {
	login := proxied(t, "10.0.0.0/8")
	peer := func(int) string { return "192.0.2.10:5000" }
	exhaust(t, login, peer, func(i int) map[string]string {
		return map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i+1), "Forwarded": fmt.Sprintf("for=203.0.113.%d", i+1)}
	})
	for _, h := range []map[string]string{
		{"X-Forwarded-For": "198.51.100.200"},
		{"Forwarded": "for=203.0.113.200"},
		{"X-Forwarded-For": "10.0.0.2"},
	} {
		if got := login("192.0.2.10:5000", h, "next@example.com"); got != 429 {
			t.Errorf("%v from an untrusted peer: status %d, want 429", h, got)
		}
	}
}

// IPv6 clients count by their /64: a subscriber picking a new address in
// its prefix for each attempt is still one client; its neighbour is not.
func TestIPv6ClientsCountByTheirSlash64(t *testing.T) {
	login := proxied(t, "fd00::/8")
	exhaust(t, login, func(i int) string { return fmt.Sprintf("[2001:db8:1:2::%x]:5000", i+1) }, func(int) map[string]string { return nil })
	if got := login("[2001:db8:1:2:ffff:ffff:ffff:ffff]:5000", nil, "next@example.com"); got != 429 {
		t.Errorf("same /64: status %d, want 429", got)
	}
	if got := login("[2001:db8:1:3::1]:5000", nil, "next@example.com"); got != 401 {
		t.Errorf("next /64: status %d, want 401", got)
	}
	// The same holds for an IPv6 client forwarded by a trusted proxy.
	if got := login("[fd00::1]:443", map[string]string{"X-Forwarded-For": "2001:db8:1:2::abcd"}, "next@example.com"); got != 429 {
		t.Errorf("same /64 through the proxy: status %d, want 429", got)
	}
}
