// Package egress is agentline's one policy for where the requests its users
// aim may go: webhook tools, a form's notify_url and event webhook
// endpoints. A user who can save a URL must not make agentline reach what
// only agentline can reach (loopback services, the private network, the
// cloud's metadata address), so the same table decides at save time (an IP
// literal in the URL, CheckURL) and at connect time (every address dialed,
// after DNS and redirects, Control).
//
// The table is IANA's "IPv4 Special-Purpose Address Registry" and "IPv6
// Special-Purpose Address Registry" (RFC 6890 and its updates), every row,
// whether or not the registry marks it globally reachable (nothing
// agentline sends belongs on an anycast relay or a documentation range
// either), plus IPv4 multicast (224.0.0.0/4, from the multicast registry),
// and the deprecated IPv6 ranges the registry no longer lists:
// IPv4-compatible ::/96 (RFC 4291) and site-local fec0::/10 (RFC 3879).
// IPv6 outside the global unicast block 2000::/3 is refused as well: IANA
// has assigned nothing else for use on the Internet.
package egress

import (
	"fmt"
	"net/netip"
)

// embedding reads the IPv4 address an IPv6 form carries.
type embedding int

const (
	none embedding = iota
	// lastFour: the IPv4 address is the last 32 bits (mapped ::ffff:a.b.c.d,
	// compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d).
	lastFour
	// sixToFour: the IPv4 address is bits 16 to 48 (2002:AABB:CCDD::/48).
	sixToFour
)

// row is one range of the policy.
type row struct {
	prefix netip.Prefix
	// what names the range in errors: "a loopback address".
	what string
	// embeds says the range carries an IPv4 address: an address in it is
	// judged by the IPv4 address inside first.
	embeds embedding
	// insidePublic lets an address of an embedding range through when the
	// IPv4 address inside is itself allowed: a NAT64 or 6to4 address of a
	// public host is how an IPv6-only network reaches that host, and a
	// mapped address is that host. IPv4-compatible addresses are
	// deprecated and routed nowhere: refused whatever they hold.
	insidePublic bool
}

// registry is the table. Where ranges nest, the longest prefix names the
// address (192.0.0.9 is the PCP anycast address, not just "an IETF protocol
// assignment"); all are refused either way.
var registry = []row{
	// IPv4 Special-Purpose Address Registry.
	r("0.0.0.0/8", `a "this network" address`),
	r("0.0.0.0/32", "the unspecified address"),
	r("10.0.0.0/8", "a private address"),
	r("100.64.0.0/10", "a carrier-grade NAT (shared) address"),
	r("127.0.0.0/8", "a loopback address"),
	r("169.254.0.0/16", "a link-local address (cloud metadata lives there)"),
	r("172.16.0.0/12", "a private address"),
	r("192.0.0.0/24", "an IETF protocol assignment address"),
	r("192.0.0.0/29", "a DS-Lite (IPv4 service continuity) address"),
	r("192.0.0.8/32", "the IPv4 dummy address"),
	r("192.0.0.9/32", "the Port Control Protocol anycast address"),
	r("192.0.0.10/32", "the TURN anycast address"),
	r("192.0.0.170/32", "a NAT64/DNS64 discovery address"),
	r("192.0.0.171/32", "a NAT64/DNS64 discovery address"),
	r("192.0.2.0/24", "a documentation address (TEST-NET-1)"),
	r("192.31.196.0/24", "an AS112 DNS address"),
	r("192.52.193.0/24", "an AMT relay address"),
	r("192.88.99.0/24", "a deprecated 6to4 relay anycast address"),
	r("192.88.99.2/32", "the 6a44 relay anycast address"),
	r("192.168.0.0/16", "a private address"),
	r("192.175.48.0/24", "an AS112 DNS address"),
	r("198.18.0.0/15", "a benchmarking address"),
	r("198.51.100.0/24", "a documentation address (TEST-NET-2)"),
	r("203.0.113.0/24", "a documentation address (TEST-NET-3)"),
	r("240.0.0.0/4", "a reserved address"),
	r("255.255.255.255/32", "the broadcast address"),
	// IPv4 Multicast Address Space Registry.
	r("224.0.0.0/4", "a multicast address"),

	// IPv6 Special-Purpose Address Registry.
	r("::1/128", "a loopback address"),
	r("::/128", "the unspecified address"),
	carries("::ffff:0:0/96", "an IPv4-mapped address", lastFour, true),
	carries("64:ff9b::/96", "a NAT64 address", lastFour, true),
	r("64:ff9b:1::/48", "a local-use NAT64 address"),
	r("100::/64", "a discard-only address"),
	r("100:0:0:1::/64", "a dummy IPv6 address"),
	r("2001::/23", "an IETF protocol assignment address"),
	r("2001::/32", "a Teredo address"), // its IPv4 inside is obfuscated and the relay's: refused whole
	r("2001:1::1/128", "the Port Control Protocol anycast address"),
	r("2001:1::2/128", "the TURN anycast address"),
	r("2001:1::3/128", "the DNS-SD service registration anycast address"),
	r("2001:2::/48", "a benchmarking address"),
	r("2001:3::/32", "an AMT address"),
	r("2001:4:112::/48", "an AS112 DNS address"),
	r("2001:10::/28", "a deprecated ORCHID address"),
	r("2001:20::/28", "an ORCHIDv2 address"),
	r("2001:30::/28", "a drone remote ID address"),
	r("2001:db8::/32", "a documentation address"),
	carries("2002::/16", "a 6to4 address", sixToFour, true),
	r("2620:4f:8000::/48", "an AS112 DNS address"),
	r("3fff::/20", "a documentation address"),
	r("5f00::/16", "a segment routing (SRv6) address"),
	r("fc00::/7", "a unique local (private) address"),
	r("fe80::/10", "a link-local address"),
	// Deprecated ranges the registry no longer lists, and multicast.
	carries("::/96", "a deprecated IPv4-compatible address", lastFour, false),
	r("fec0::/10", "a deprecated site-local address"),
	r("ff00::/8", "a multicast address"),
}

// globalUnicast is the only IPv6 block IANA hands out for the Internet.
var globalUnicast = netip.MustParsePrefix("2000::/3")

func r(prefix, what string) row {
	return row{prefix: netip.MustParsePrefix(prefix), what: what}
}

func carries(prefix, what string, e embedding, insidePublic bool) row {
	return row{prefix: netip.MustParsePrefix(prefix), what: what, embeds: e, insidePublic: insidePublic}
}

// BlockedError is the policy's refusal of one address.
type BlockedError struct {
	// Addr is the address refused.
	Addr netip.Addr
	// What names its range: "a loopback address".
	What string
	// Inside is the IPv4 address Addr carries, when it is judged by it
	// (then What names Inside's range, and Form Addr's).
	Inside netip.Addr
	Form   string
}

func (e *BlockedError) Error() string {
	switch {
	case !e.Addr.IsValid():
		return "the address dialed is " + e.What
	case e.Inside.IsValid():
		return fmt.Sprintf("%s is %s holding %s, %s", e.Addr, e.Form, e.Inside, e.What)
	}
	return fmt.Sprintf("%s is %s", e.Addr, e.What)
}

// Check returns a *BlockedError when ip may not be reached, nil when it may.
func Check(ip netip.Addr) error {
	// A zone (fe80::1%eth0) would make every prefix miss.
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return &BlockedError{Addr: ip, What: "not a valid address"}
	}
	rw, ok := lookup(ip)
	if !ok {
		if ip.Is6() && !globalUnicast.Contains(ip) {
			return &BlockedError{Addr: ip, What: "an IPv6 address outside global unicast (2000::/3)"}
		}
		return nil
	}
	if rw.embeds == none {
		return &BlockedError{Addr: ip, What: rw.what}
	}
	inside := embedded(ip, rw.embeds)
	if in, ok := lookup(inside); ok {
		return &BlockedError{Addr: ip, What: in.what, Inside: inside, Form: rw.what}
	}
	if rw.insidePublic {
		return nil
	}
	return &BlockedError{Addr: ip, What: rw.what}
}

// lookup returns the most specific row holding ip.
func lookup(ip netip.Addr) (row, bool) {
	best, found := row{}, false
	for _, rw := range registry {
		if rw.prefix.Contains(ip) && (!found || rw.prefix.Bits() > best.prefix.Bits()) {
			best, found = rw, true
		}
	}
	return best, found
}

// embedded is the IPv4 address ip carries in the form e.
func embedded(ip netip.Addr, e embedding) netip.Addr {
	b := ip.As16()
	if e == sixToFour {
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
}
