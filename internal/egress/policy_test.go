package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/egress/egresstest"
)

// One address of every range is refused, the public ones pass, and the
// refused ones together name every row of the table: a row added without
// a test case fails here.
func TestCheck(t *testing.T) {
	covered := map[netip.Prefix]bool{}
	outside := false
	for _, c := range egresstest.Refused() {
		ip := netip.MustParseAddr(c.Addr)
		err := Check(ip)
		var b *BlockedError
		if !errors.As(err, &b) {
			t.Errorf("%s (%s): Check = %v, want refused", c.Name, c.Addr, err)
			continue
		}
		t.Logf("%-40s %s", c.Name, err)
		if rw, ok := lookup(ip); ok {
			covered[rw.prefix] = true
		} else {
			outside = true
		}
	}
	for _, rw := range registry {
		if !covered[rw.prefix] {
			t.Errorf("no test address in %s (%s)", rw.prefix, rw.what)
		}
	}
	if !outside {
		t.Error("no test address outside 2000::/3 and the table")
	}
	for _, c := range egresstest.Allowed() {
		if err := Check(netip.MustParseAddr(c.Addr)); err != nil {
			t.Errorf("%s (%s): Check = %v, want allowed", c.Name, c.Addr, err)
		}
	}
}

// Both ends of every range are refused: a prefix typed one bit short or
// long shows up here.
func TestCheckRangeEnds(t *testing.T) {
	for _, rw := range registry {
		first := rw.prefix.Masked().Addr()
		last := first
		for i := rw.prefix.Bits(); i < first.BitLen(); i++ {
			b := last.AsSlice()
			b[i/8] |= 0x80 >> (i % 8)
			last, _ = netip.AddrFromSlice(b)
		}
		for _, ip := range []netip.Addr{first, last} {
			if Check(ip) == nil {
				t.Errorf("%s (%s) of %s is allowed", ip, rw.what, rw.prefix)
			}
		}
	}
}

func TestBlockedMessages(t *testing.T) {
	for addr, want := range map[string]string{
		"169.254.169.254":          "169.254.169.254 is a link-local address (cloud metadata lives there)",
		"64:ff9b::7f00:1":          "64:ff9b::7f00:1 is a NAT64 address holding 127.0.0.1, a loopback address",
		"::ffff:169.254.169.254":   "::ffff:169.254.169.254 is an IPv4-mapped address holding 169.254.169.254, a link-local address (cloud metadata lives there)",
		"2002:a9fe:a9fe::1":        "2002:a9fe:a9fe::1 is a 6to4 address holding 169.254.169.254, a link-local address (cloud metadata lives there)",
		"::7f00:1":                 "::7f00:1 is a deprecated IPv4-compatible address holding 127.0.0.1, a loopback address",
		"::808:808":                "::808:808 is a deprecated IPv4-compatible address",
		"192.0.0.9":                "192.0.0.9 is the Port Control Protocol anycast address",
		"2001:0:4136:e378::1":      "2001:0:4136:e378::1 is a Teredo address",
		"fe80::1%eth0":             "fe80::1 is a link-local address",
		"100.100.100.200":          "100.100.100.200 is a carrier-grade NAT (shared) address",
		"fd00:ec2::254":            "fd00:ec2::254 is a unique local (private) address",
		"64:ff9b::192.168.100.100": "64:ff9b::c0a8:6464 is a NAT64 address holding 192.168.100.100, a private address",
	} {
		err := Check(netip.MustParseAddr(addr))
		if err == nil || err.Error() != want {
			t.Errorf("Check(%s) = %v, want %q", addr, err, want)
		}
	}
}

// Control judges the address dialed, with its port.
func TestControl(t *testing.T) {
	for address, refused := range map[string]bool{
		"127.0.0.1:80": true, "[::1]:443": true, "[::ffff:127.0.0.1]:80": true, "[fe80::1%lo]:80": true,
		"169.254.169.254:80": true, "[64:ff9b::a9fe:a9fe]:80": true, "not-an-address": true,
		"8.8.8.8:443": false, "[2606:4700::1111]:443": false,
	} {
		err := Control("tcp", address, nil)
		var b *BlockedError
		if refused != errors.As(err, &b) || refused != (err != nil) {
			t.Errorf("Control(%s) = %v, want refused %v", address, err, refused)
		}
		if err != nil && strings.Contains(err.Error(), "%!") {
			t.Errorf("Control(%s) message %q", address, err)
		}
	}
}
