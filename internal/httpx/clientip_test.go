package httpx_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline/internal/httpx"
)

// The edge resolves the client once: the peer, or from a trusted peer the
// right-most forwarded address that is no trusted proxy. Headers that do
// not parse never yield an address the client chose.
func TestClientAddr(t *testing.T) {
	edge := httpx.NewEdge(slog.New(slog.NewTextHandler(io.Discard, nil)), 1024, prometheus.NewRegistry())
	edge.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	var got string
	h := edge.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = ""
		if a, ok := httpx.ClientAddr(r.Context()); ok {
			got = a.String()
		}
	}))
	const proxy = "10.0.0.2:41000"
	for _, tc := range []struct {
		name, peer, xff, forwarded, want string
	}{
		{"no proxy", "198.51.100.7:5000", "", "", "198.51.100.7"},
		{"untrusted peer, spoofed header", "198.51.100.7:5000", "203.0.113.1", "for=203.0.113.2", "198.51.100.7"},
		{"IPv4-mapped peer", "[::ffff:198.51.100.7]:5000", "", "", "198.51.100.7"},
		{"IPv6 peer", "[2001:db8::1]:5000", "", "", "2001:db8::1"},
		{"trusted, no header", proxy, "", "", "10.0.0.2"},
		{"trusted, one hop", proxy, "198.51.100.7", "", "198.51.100.7"},
		{"trusted, spaces", proxy, "  198.51.100.7  ", "", "198.51.100.7"},
		{"trusted, client prefix", proxy, "1.2.3.4, 198.51.100.7", "", "198.51.100.7"},
		{"trusted, two proxies", proxy, "198.51.100.7, 10.9.9.9", "", "198.51.100.7"},
		{"trusted, all proxies", proxy, "10.1.1.1, 10.9.9.9", "", "10.1.1.1"},
		{"trusted, with port", proxy, "198.51.100.7:1234", "", "198.51.100.7"},
		{"trusted, bracketed IPv6 with port", proxy, "[2001:db8::7]:1234", "", "2001:db8::7"},
		{"trusted, IPv6", proxy, "2001:db8::7", "", "2001:db8::7"},
		{"malformed", proxy, "not-an-ip", "", "10.0.0.2"},
		{"malformed right-most", proxy, "198.51.100.7, garbage", "", "10.0.0.2"},
		{"malformed behind a trusted hop", proxy, "garbage, 10.9.9.9", "", "10.9.9.9"},
		{"malformed left of the client", proxy, "garbage, 198.51.100.7", "", "198.51.100.7"},
		{"only commas", proxy, ",,,", "", "10.0.0.2"},
		{"zone", proxy, "fe80::1%eth0", "", "10.0.0.2"},
		{"overlong", proxy, string(make([]byte, 300)), "", "10.0.0.2"},
		{"Forwarded", proxy, "", "for=198.51.100.7;proto=https;by=10.0.0.2", "198.51.100.7"},
		{"Forwarded, case", proxy, "", "For=198.51.100.7", "198.51.100.7"},
		{"Forwarded, quoted IPv6", proxy, "", `for="[2001:db8:cafe::17]:4711"`, "2001:db8:cafe::17"},
		{"Forwarded, list", proxy, "", "for=1.2.3.4, for=198.51.100.7, for=10.3.3.3", "198.51.100.7"},
		{"Forwarded, unknown", proxy, "", "for=unknown", "10.0.0.2"},
		{"Forwarded, obfuscated", proxy, "", "for=_hidden, for=10.3.3.3", "10.3.3.3"},
		{"Forwarded, no for", proxy, "", "proto=https", "10.0.0.2"},
		{"Forwarded, unterminated quote", proxy, "", `for="198.51.100.7`, "198.51.100.7"},
		{"Forwarded, quoted comma", proxy, "", `for="1.2.3.4,5", for=198.51.100.7`, "198.51.100.7"},
		// X-Forwarded-For is the header the recommended proxy appends to.
		{"both headers", proxy, "198.51.100.7", "for=203.0.113.5", "198.51.100.7"},
		{"trusted IPv6 proxy", "[fd00::2]:443", "198.51.100.7", "", "198.51.100.7"},
		{"unparseable peer", "pipe", "198.51.100.7", "", ""},
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = tc.peer
		if tc.xff != "" {
			req.Header.Set("X-Forwarded-For", tc.xff)
		}
		if tc.forwarded != "" {
			req.Header.Set("Forwarded", tc.forwarded)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if got != tc.want {
			t.Errorf("%s: client %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Several header lines are one list, in order.
func TestClientAddrSeveralHeaderLines(t *testing.T) {
	edge := httpx.NewEdge(slog.New(slog.NewTextHandler(io.Discard, nil)), 1024, prometheus.NewRegistry())
	edge.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	var got netip.Addr
	h := edge.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = httpx.ClientAddr(r.Context()) }))
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "10.0.0.2:41000"
	req.Header.Add("X-Forwarded-For", "203.0.113.1")
	req.Header.Add("X-Forwarded-For", "198.51.100.7, 10.4.4.4")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got.String() != "198.51.100.7" {
		t.Fatalf("client = %v, want 198.51.100.7", got)
	}
}

func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"198.51.100.7":         "198.51.100.7",
		"::ffff:198.51.100.7":  "198.51.100.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2::1":      "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
		"fe80::1%eth0":         "fe80::/64",
		"::1":                  "::/64",
	} {
		if got := httpx.ClientKey(netip.MustParseAddr(in)); got != want {
			t.Errorf("ClientKey(%s) = %s, want %s", in, got, want)
		}
	}
}
