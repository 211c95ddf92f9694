package httpx

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
)

type clientIPKey struct{}

// ClientAddr is the address of the client the edge resolved for the
// request: the TCP peer, or, when the peer is a trusted proxy, the address
// the proxies forwarded. ok is false outside the edge or when the peer's
// address does not parse.
func ClientAddr(ctx context.Context) (addr netip.Addr, ok bool) {
	addr, ok = ctx.Value(clientIPKey{}).(netip.Addr)
	return addr, ok
}

// PeerAddr is the address of the TCP peer of r.
func PeerAddr(r *http.Request) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

// resolveClient finds the client's address. Forwarding headers are read
// only from a trusted peer, since anyone else can write them; and of the
// forwarded chain only the right-most address that is not itself a trusted
// proxy counts, since everything left of it was written by the client.
// X-Forwarded-For is preferred over Forwarded because it is what the
// recommended nginx appends to; a proxy that writes Forwarded instead must
// drop any X-Forwarded-For the client sent.
func resolveClient(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	peer, ok := PeerAddr(r)
	if !ok || !isTrusted(peer, trusted) {
		return peer, ok
	}
	var hops []string
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		hops = splitList(strings.Join(xff, ","))
	} else {
		for _, element := range splitList(strings.Join(r.Header.Values("Forwarded"), ",")) {
			hops = append(hops, forwardedFor(element))
		}
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			// Not written by a trusted proxy (or deliberately obfuscated):
			// the last trusted hop is the best that is known.
			return client, true
		}
		client = a
		if !isTrusted(a, trusted) {
			return a, true
		}
	}
	return client, true
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// splitList splits a header list on the commas outside quoted strings.
func splitList(s string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" || len(out) > 0 {
		out = append(out, rest)
	}
	return out
}

// forwardedFor returns the for= value of one RFC 7239 element, unquoted,
// or "" when it has none.
func forwardedFor(element string) string {
	for _, pair := range strings.Split(element, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// parseHop reads one forwarded address: 192.0.2.1, 192.0.2.1:4711,
// 2001:db8::1 or [2001:db8::1]:4711. Names such as "unknown" or "_hidden"
// are not addresses.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() && a.Zone() == "" {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// ClientKey is the key per-client limits count under: the address, or for
// IPv6 its /64, since one subscriber usually holds a whole /64 and could
// otherwise pick a fresh address for every attempt.
func ClientKey(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
	}
	return a.String()
}
