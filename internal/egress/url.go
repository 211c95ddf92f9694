package egress

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"

	"github.com/agentline/agentline"
)

// AllowSetting is the setting that lifts the policy, for development on
// loopback and for deployments that call their own private network. The
// save-time errors name it, so whoever meets one knows what to set.
const AllowSetting = "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS"

// CheckURL is the save-time half of the policy, for a URL agentline will
// send requests to: an absolute http or https URL without a user name or
// password, whose host, when it is an IP address or a localhost name, the
// policy allows (allowPrivate, the AllowSetting, lets every address
// through). A host that reads as an IPv4 address in a shorthand form
// (http://2130706433/, http://0x7f.1/, http://127.1/), which some resolvers
// turn into an address and others into a name, is refused whatever the
// setting. Names are not resolved: what a name points to can change after
// the save, so Control, at connect time, is what decides. Errors are
// agentline.Invalid naming field; messages name its last part.
func CheckURL(field, raw string, allowPrivate bool) error {
	name := field[strings.LastIndex(field, ".")+1:]
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return agentline.Invalid(field, "%s must be an absolute http(s) URL, such as https://hooks.example.com/agentline", name)
	}
	if u.User != nil {
		return agentline.Invalid(field, "%s must not carry a user name or password; send credentials in headers", name)
	}
	host, err := hostOf(u)
	if err != nil {
		return agentline.Invalid(field, "%s: %v", name, err)
	}
	if allowPrivate {
		return nil
	}
	var reason string
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := Check(ip); err != nil {
			reason = err.Error()
		}
	} else if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		reason = host + " is a loopback name"
	}
	if reason != "" {
		return agentline.Invalid(field, "%s: %s; agentline sends nothing to internal addresses (set %s=true to allow them while developing)",
			name, reason, AllowSetting)
	}
	return nil
}

// hostOf is u's host as the HTTP client will dial it: brackets and a
// trailing dot removed, lower case, international names in their ASCII
// form (net/http maps non-ASCII hosts with the same IDNA profile, which
// also turns full-width digits into ASCII ones; ASCII hosts it dials as
// they are).
func hostOf(u *url.URL) (string, error) {
	host := strings.TrimSuffix(u.Hostname(), ".")
	if host == "" {
		return "", errors.New("the URL has no host")
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return host, nil
	}
	if !isASCII(host) {
		ascii, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", errors.New("the host is neither a valid name nor an IP address")
		}
		host = ascii
	}
	if strings.Contains(host, ":") {
		return "", errors.New("the host is neither a valid name nor an IP address")
	}
	host = strings.ToLower(host)
	if labels := strings.Split(host, "."); isNumber(labels[len(labels)-1]) {
		if _, err := netip.ParseAddr(host); err != nil {
			return "", errors.New(host + " reads as an IPv4 address in a shorthand form (one number, hex, octal or fewer than four parts), " +
				"which resolvers read differently; write the address as four decimal numbers, such as 203.0.113.7, or use a name")
		}
	}
	return host, nil
}

// isNumber reports whether a host's last label is a number, decimal,
// octal or hex: then the host is an IPv4 address to a URL parser (the
// WHATWG URL standard's "ends in a number" rule), never a name.
func isNumber(label string) bool {
	digits := "0123456789"
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		label, digits = rest, "0123456789abcdef"
		if label == "" {
			return true
		}
	}
	return label != "" && strings.Trim(label, digits) == ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
