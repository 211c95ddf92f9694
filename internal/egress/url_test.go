package egress_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/egress/egresstest"
)

// hostURL is an http URL with ip as its host (in brackets when IPv6).
func hostURL(ip string) string {
	if netip.MustParseAddr(ip).Is6() {
		return "http://[" + ip + "]:8080/hook"
	}
	return "http://" + ip + "/hook"
}

// invalid reports whether err is a 400 naming field, and its message.
func invalid(t *testing.T, err error, field string) string {
	t.Helper()
	var e *agentline.Error
	if !errors.As(err, &e) || e.Code != agentline.EInvalid || e.Field != field {
		t.Fatalf("error %v, want invalid_request naming %s", err, field)
	}
	return e.Message
}

// Every refused address as a URL's host is a 400 that names the field and
// the setting; with the setting on, it is saved.
func TestCheckURLRefusesInternalHosts(t *testing.T) {
	var urls []string
	for _, c := range egresstest.Refused() {
		urls = append(urls, hostURL(c.Addr))
	}
	urls = append(urls, "http://localhost:8080/", "https://LOCALHOST./x", "http://api.localhost/", "http://[fe80::1%25eth0]/",
		"http://１２７.０.０.１/", "https://127.0.0.1./x")
	for _, raw := range urls {
		msg := invalid(t, egress.CheckURL("settings.form.notify_url", raw, false), "settings.form.notify_url")
		if !strings.HasPrefix(msg, "notify_url: ") || !strings.Contains(msg, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS=true") {
			t.Errorf("%s: message %q", raw, msg)
		}
		if err := egress.CheckURL("url", raw, true); err != nil {
			t.Errorf("%s with private webhooks allowed: %v", raw, err)
		}
	}
	msg := invalid(t, egress.CheckURL("url", "http://169.254.169.254/latest/meta-data/", false), "url")
	if want := "url: 169.254.169.254 is a link-local address (cloud metadata lives there); agentline sends nothing to internal addresses " +
		"(set AGENTLINE_ALLOW_PRIVATE_WEBHOOKS=true to allow them while developing)"; msg != want {
		t.Errorf("message %q\nwant    %q", msg, want)
	}
}

func TestCheckURL(t *testing.T) {
	for _, c := range egresstest.Allowed() {
		if err := egress.CheckURL("url", hostURL(c.Addr), false); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	for _, raw := range []string{"https://hooks.example.com/agentline", "http://my_service.example.com:8080/x?a=1",
		"https://bücher.example/x", "https://0x.example.com/", "https://1.example.com/", "HTTPS://Hooks.Example.COM/"} {
		if err := egress.CheckURL("url", raw, false); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
	// Malformed, and IPv4 shorthands: refused with the setting on too.
	for _, raw := range []string{"ftp://example.com/x", "hooks.example.com", "/hook", "http:///x", "https://u:p@example.com/",
		"javascript:alert(1)", "http://[::1/", "http://2130706433/", "http://0x7f.1/", "http://0x7f000001/", "http://0177.0.0.1/",
		"http://127.1/", "http://127.000.000.001/", "http://1.2.3.4.5/", "http://example.0x10/", "http://169.254.43518/",
		"http://0/", "http://0x/", "http://exa mple.com/", "http://%31%32%37.0.0.1/"} {
		for _, allow := range []bool{false, true} {
			msg := invalid(t, egress.CheckURL("url", raw, allow), "url")
			if strings.Contains(msg, "ALLOW_PRIVATE") {
				t.Errorf("%s: a setting cannot fix it, yet the message names one: %q", raw, msg)
			}
		}
	}
}
