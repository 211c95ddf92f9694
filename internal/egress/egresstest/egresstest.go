// Package egresstest holds what the tests of the outgoing address policy
// share across packages: one address from every range the policy refuses,
// addresses it lets through, and a DNS server on loopback that answers
// names with any of them, so a test can show the connect-time guard
// judging the address a name resolved to.
package egresstest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// Case is one address with what it stands for.
type Case struct {
	Name string
	Addr string
}

// Refused lists one address from every range of the policy (IANA's IPv4
// and IPv6 special-purpose registries and the rest), and the mapped,
// IPv4-compatible, NAT64 and 6to4 forms of loopback and of the cloud
// metadata address. It returns a new slice on each call.
func Refused() []Case {
	return []Case{
		{"this network", "0.1.2.3"},
		{"unspecified IPv4", "0.0.0.0"},
		{"private 10/8", "10.0.0.1"},
		{"carrier-grade NAT", "100.64.0.1"},
		{"loopback", "127.0.0.1"},
		{"loopback, not .1", "127.8.9.10"},
		{"cloud metadata (link-local)", "169.254.169.254"},
		{"private 172.16/12", "172.16.0.1"},
		{"IETF protocol assignments", "192.0.0.100"},
		{"DS-Lite", "192.0.0.1"},
		{"IPv4 dummy", "192.0.0.8"},
		{"PCP anycast", "192.0.0.9"},
		{"TURN anycast", "192.0.0.10"},
		{"NAT64 discovery", "192.0.0.170"},
		{"NAT64 discovery 2", "192.0.0.171"},
		{"TEST-NET-1", "192.0.2.1"},
		{"AS112-v4", "192.31.196.1"},
		{"AMT", "192.52.193.1"},
		{"6to4 relay anycast", "192.88.99.1"},
		{"6a44 relay anycast", "192.88.99.2"},
		{"private 192.168/16", "192.168.1.1"},
		{"AS112 direct delegation", "192.175.48.1"},
		{"benchmarking", "198.18.0.1"},
		{"benchmarking, second /16", "198.19.255.254"},
		{"TEST-NET-2", "198.51.100.1"},
		{"TEST-NET-3", "203.0.113.1"},
		{"multicast", "224.0.0.1"},
		{"reserved 240/4", "240.0.0.1"},
		{"broadcast", "255.255.255.255"},

		{"IPv6 loopback", "::1"},
		{"IPv6 unspecified", "::"},
		{"IPv4-mapped loopback", "::ffff:127.0.0.1"},
		{"IPv4-mapped metadata", "::ffff:169.254.169.254"},
		{"IPv4-compatible loopback", "::127.0.0.1"},
		{"IPv4-compatible metadata", "::169.254.169.254"},
		{"IPv4-compatible public (deprecated)", "::8.8.8.8"},
		{"NAT64 of loopback", "64:ff9b::127.0.0.1"},
		{"NAT64 of metadata", "64:ff9b::169.254.169.254"},
		{"local-use NAT64", "64:ff9b:1::1"},
		{"discard-only", "100::1"},
		{"dummy IPv6 prefix", "100:0:0:1::1"},
		{"IETF protocol assignments v6", "2001:1ff::1"},
		{"Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2"},
		{"PCP anycast v6", "2001:1::1"},
		{"TURN anycast v6", "2001:1::2"},
		{"DNS-SD SRP anycast", "2001:1::3"},
		{"benchmarking v6", "2001:2::1"},
		{"AMT v6", "2001:3::1"},
		{"AS112-v6", "2001:4:112::1"},
		{"ORCHID", "2001:10::1"},
		{"ORCHIDv2", "2001:20::1"},
		{"drone remote ID", "2001:30::1"},
		{"documentation v6", "2001:db8::1"},
		{"6to4 of loopback", "2002:7f00:1::1"},
		{"6to4 of metadata", "2002:a9fe:a9fe::1"},
		{"6to4 of private", "2002:c0a8:101::1"},
		{"AS112 direct delegation v6", "2620:4f:8000::1"},
		{"documentation 3fff::/20", "3fff::1"},
		{"SRv6 SIDs", "5f00::1"},
		{"unique local", "fd00::1"},
		{"unique local fc00", "fc00::1"},
		{"link-local v6", "fe80::1"},
		{"site-local (deprecated)", "fec0::1"},
		{"multicast v6", "ff02::1"},
		{"outside 2000::/3", "4000::1"},
	}
}

// Allowed lists public addresses the policy lets through, the 6to4, NAT64
// and mapped forms of a public IPv4 address among them.
func Allowed() []Case {
	return []Case{
		{"public IPv4", "8.8.8.8"},
		{"public IPv4 next to 172.16/12", "172.32.0.1"},
		{"public IPv4 next to CGNAT", "100.128.0.1"},
		{"public IPv6", "2606:4700::1111"},
		{"6to4 of a public IPv4", "2002:808:808::1"},
		{"NAT64 of a public IPv4", "64:ff9b::8.8.8.8"},
		{"IPv4-mapped public", "::ffff:8.8.8.8"},
	}
}

// Resolver starts a DNS server on loopback that answers A and AAAA
// questions for the names in answers (without the final dot) with their
// address, and nothing for other names; it returns a resolver that asks
// only it. The server stops when the test ends.
func Resolver(t testing.TB, answers map[string]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go serveDNS(pc, answers)
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

func serveDNS(pc net.PacketConn, answers map[string]netip.Addr) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if msg, err := answer(buf[:n], answers); err == nil {
			pc.WriteTo(msg, from)
		}
	}
}

// answer builds the reply to one query: an A record for an IPv4 answer, an
// AAAA record for an IPv6 one (IPv4-mapped included), none otherwise.
func answer(query []byte, answers map[string]netip.Addr) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
	b.StartQuestions()
	b.Question(q)
	b.StartAnswers()
	addr, ok := answers[strings.TrimSuffix(q.Name.String(), ".")]
	rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET}
	switch {
	case ok && addr.Is4() && q.Type == dnsmessage.TypeA:
		b.AResource(rh, dnsmessage.AResource{A: addr.As4()})
	case ok && addr.Is6() && q.Type == dnsmessage.TypeAAAA:
		b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: addr.As16()})
	}
	return b.Finish()
}
