package config_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/config"
)

func TestSkipCarrierSignaturesSetting(t *testing.T) {
	prod := map[string]string{"AGENTLINE_ENV": "production", "AGENTLINE_SKIP_CARRIER_SIGNATURES": "true"}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want bool
		err  string
	}{
		{name: "off by default", want: false},
		{name: "flag", args: []string{"--skip-carrier-signatures"}, want: true},
		{name: "env", env: map[string]string{"AGENTLINE_SKIP_CARRIER_SIGNATURES": "true"}, want: true},
		{name: "never in production", env: prod, err: "AGENTLINE_SKIP_CARRIER_SIGNATURES must not be set in production"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(tc.args, env(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.SkipCarrierSigs != tc.want {
				t.Fatalf("SkipCarrierSigs = %v, want %v", c.SkipCarrierSigs, tc.want)
			}
		})
	}
}
