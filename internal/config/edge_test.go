package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/config"
)

// AGENTLINE_TRUSTED_PROXIES: CIDRs or bare addresses, the flag over the
// env var, and a clear error naming the setting and the bad entry.
func TestTrustedProxies(t *testing.T) {
	c, err := config.Load(nil, env(nil))
	if err != nil || len(c.TrustedProxies()) != 0 {
		t.Fatalf("default trusts %v (%v), want none", c.TrustedProxies(), err)
	}
	c, err = config.Load(nil, env(map[string]string{"AGENTLINE_TRUSTED_PROXIES": " 10.0.0.0/8, 127.0.0.1,fd00::/8,::ffff:192.168.0.0/112,10.1.2.3/8 "}))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(c.TrustedProxies()); got != "[10.0.0.0/8 127.0.0.1/32 fd00::/8 192.168.0.0/16 10.0.0.0/8]" {
		t.Fatalf("trusted = %s", got)
	}
	c, err = config.Load([]string{"--trusted-proxies", "192.0.2.0/24"}, env(map[string]string{"AGENTLINE_TRUSTED_PROXIES": "10.0.0.0/8"}))
	if err != nil || fmt.Sprint(c.TrustedProxies()) != "[192.0.2.0/24]" {
		t.Fatalf("flag over env: %v %v", c.TrustedProxies(), err)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.internal", "10.0.0.0/8;10.1.0.0/16", "fe80::1%eth0", "10.0.0.0/8 192.0.2.0/24"} {
		_, err := config.Load(nil, env(map[string]string{"AGENTLINE_TRUSTED_PROXIES": bad}))
		if err == nil || !strings.Contains(err.Error(), "AGENTLINE_TRUSTED_PROXIES") || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("AGENTLINE_TRUSTED_PROXIES=%q: %v, want one line naming the setting", bad, err)
		}
	}
}

// /metrics has its own listener, on loopback unless told otherwise; "off"
// (or an empty flag) turns it off.
func TestMetricsAddr(t *testing.T) {
	for _, tc := range []struct {
		vars    map[string]string
		args    []string
		addr    string
		enabled bool
	}{
		{nil, nil, "127.0.0.1:9090", true},
		{map[string]string{"AGENTLINE_METRICS_ADDR": "off"}, nil, "off", false},
		{map[string]string{"AGENTLINE_METRICS_ADDR": "10.0.0.5:9100"}, nil, "10.0.0.5:9100", true},
		{map[string]string{"AGENTLINE_METRICS_ADDR": ":9100"}, []string{"--metrics-addr", ""}, "", false},
		{map[string]string{"AGENTLINE_METRICS_ADDR": "off"}, []string{"--metrics-addr=127.0.0.1:0"}, "127.0.0.1:0", true},
	} {
		c, err := config.Load(tc.args, env(tc.vars))
		if err != nil || c.MetricsAddr != tc.addr || c.MetricsEnabled() != tc.enabled {
			t.Errorf("%v %v: addr %q enabled %t (%v), want %q %t", tc.vars, tc.args, c.MetricsAddr, c.MetricsEnabled(), err, tc.addr, tc.enabled)
		}
	}
	for _, bad := range []string{"9090", "localhost", "http://127.0.0.1:9090"} {
		if _, err := config.Load(nil, env(map[string]string{"AGENTLINE_METRICS_ADDR": bad})); err == nil || !strings.Contains(err.Error(), "AGENTLINE_METRICS_ADDR") {
			t.Errorf("AGENTLINE_METRICS_ADDR=%q: %v", bad, err)
		}
	}
}

// Carrier credentials that cannot be valid stop the start with one line
// naming the setting (the token itself never shown), in any environment.
func TestCarrierCredentials(t *testing.T) {
	const sid, token = "AC0123456789abcdef0123456789ABCDEF", "0123456789abcdef0123456789abcdef"
	if _, err := config.Load(nil, env(map[string]string{"TWILIO_ACCOUNT_SID": sid, "TWILIO_AUTH_TOKEN": token})); err != nil {
		t.Fatalf("valid credentials: %v", err)
	}
	for _, tc := range []struct{ sid, token, name string }{
		{"AC1", token, "TWILIO_ACCOUNT_SID"},
		{"PN0123456789abcdef0123456789abcdef", token, "TWILIO_ACCOUNT_SID"},
		{"AC0123456789abcdef0123456789abcdeg", token, "TWILIO_ACCOUNT_SID"},
		{" " + sid, token, "TWILIO_ACCOUNT_SID"},
		{sid, `"` + token + `"`, "TWILIO_AUTH_TOKEN"},
		{sid, token + "\n", "TWILIO_AUTH_TOKEN"},
		{sid, "sec ret", "TWILIO_AUTH_TOKEN"},
		{sid, "to-ken", "TWILIO_AUTH_TOKEN"},
	} {
		_, err := config.Load(nil, env(map[string]string{"TWILIO_ACCOUNT_SID": tc.sid, "TWILIO_AUTH_TOKEN": tc.token}))
		if err == nil || !strings.Contains(err.Error(), tc.name) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q / %q: %v, want one line naming %s", tc.sid, tc.token, err, tc.name)
			continue
		}
		if tc.name == "TWILIO_AUTH_TOKEN" && strings.Contains(err.Error(), strings.Trim(tc.token, "\"\n")) {
			t.Errorf("the error repeats the token: %v", err)
		}
	}
}
