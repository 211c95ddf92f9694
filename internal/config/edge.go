package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// edgeErrors checks the settings of the HTTP edge: the client address
// behind proxies, the body read time and the metrics listener.
func (c *Config) edgeErrors() []error {
	var errs []error
	if _, err := parsePrefixes(c.TrustedProxyList); err != nil {
		errs = append(errs, fmt.Errorf("AGENTLINE_TRUSTED_PROXIES must be comma-separated CIDRs: %w", err))
	}
	if c.BodyReadTimeout <= 0 {
		errs = append(errs, errors.New("AGENTLINE_BODY_READ_TIMEOUT must be positive, such as 30s"))
	}
	if c.MetricsEnabled() {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			errs = append(errs, fmt.Errorf("AGENTLINE_METRICS_ADDR must be host:port such as 127.0.0.1:9090, or off, not %q", c.MetricsAddr))
		}
	}
	return errs
}

// TrustedProxies is AGENTLINE_TRUSTED_PROXIES parsed; Validate has refused
// a list that does not parse, so errors are not expected here.
func (c *Config) TrustedProxies() []netip.Prefix {
	p, _ := parsePrefixes(c.TrustedProxyList)
	return p
}

// parsePrefixes reads a comma-separated list of CIDRs; a bare address
// stands for itself alone, so "127.0.0.1" is as good as "127.0.0.1/32".
func parsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			// Peers are compared unmapped: ::ffff:10.0.0.0/104 means 10.0.0.0/8.
			if p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%q is neither a CIDR such as 10.0.0.0/8 nor an IP address", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
