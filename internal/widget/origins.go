package widget

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agentline/agentline"
)

// An allowed_origins entry is either an origin, scheme://host[:port] with
// scheme http or https, or a wildcard *.domain, which matches every
// subdomain of domain at any depth, over https or http, on the default port.
// It never matches domain itself, nor evil-domain, nor domain.evil.io.
// "null" (sandboxed iframes, file: pages) matches nothing.

// maxOrigins bounds a key's list.
const maxOrigins = 50

// normalizeOrigins validates entries and returns them in canonical form,
// without duplicates. The error names the first bad entry.
func normalizeOrigins(entries []string) ([]string, error) {
	if len(entries) > maxOrigins {
		return nil, agentline.Invalid("allowed_origins", "allowed_origins has %d entries; at most %d are allowed", len(entries), maxOrigins)
	}
	out := make([]string, 0, len(entries))
	seen := map[string]bool{}
	for i, e := range entries {
		n, err := normalizeOrigin(strings.TrimSpace(e))
		if err != nil {
			return nil, agentline.Invalid(fmt.Sprintf("allowed_origins[%d]", i), "allowed_origins entry %q %v", e, err)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

func normalizeOrigin(e string) (string, error) {
	switch {
	case e == "":
		return "", fmt.Errorf("is empty")
	case e == "*":
		return "", fmt.Errorf("is not allowed: leave the list empty to allow every origin")
	case strings.EqualFold(e, "null"):
		return "", fmt.Errorf("is not allowed: the null origin is never trusted")
	case strings.HasPrefix(e, "*."):
		domain := strings.ToLower(e[2:])
		if !validHost(domain) || !strings.Contains(domain, ".") && domain != "localhost" {
			return "", fmt.Errorf("is not of the form *.example.com")
		}
		return "*." + domain, nil
	}
	o, ok := parseOrigin(e)
	if !ok {
		return "", fmt.Errorf("is not an origin such as https://shop.example.com or a wildcard such as *.example.com")
	}
	return o.String(), nil
}

// origin is a parsed Origin: scheme, host and port (empty for the default).
type origin struct{ scheme, host, port string }

func (o origin) String() string {
	s := o.scheme + "://" + o.host
	if o.port != "" {
		s += ":" + o.port
	}
	return s
}

// parseOrigin parses s as scheme://host[:port] and nothing else.
func parseOrigin(s string) (origin, bool) {
	u, err := url.Parse(s)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") ||
		strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return origin{}, false
	}
	o := origin{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if o.scheme != "http" && o.scheme != "https" || !validHost(o.host) && !strings.HasPrefix(u.Host, "[") {
		return origin{}, false
	}
	if strings.HasPrefix(u.Host, "[") {
		o.host = "[" + o.host + "]"
	}
	if (o.scheme == "https" && o.port == "443") || (o.scheme == "http" && o.port == "80") {
		o.port = ""
	}
	if o.port != "" {
		var n int
		if _, err := fmt.Sscanf(o.port, "%d", &n); err != nil || n < 1 || n > 65535 || fmt.Sprint(n) != o.port {
			return origin{}, false
		}
	}
	return o, true
}

// validHost accepts DNS names: labels of letters, digits and hyphens.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// originAllowed reports whether the Origin header value may use a key with
// this (normalized) list. An empty list allows every origin, and requests
// without one.
func originAllowed(allowed []string, header string) bool {
	if len(allowed) == 0 {
		return true
	}
	if header == "" || header == "null" {
		return false
	}
	o, ok := parseOrigin(header)
	if !ok {
		return false
	}
	for _, a := range allowed {
		if strings.HasPrefix(a, "*.") {
			if o.port == "" && strings.HasSuffix(o.host, a[1:]) && len(o.host) > len(a)-1 {
				return true
			}
			continue
		}
		if a == o.String() {
			return true
		}
	}
	return false
}
