package config_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/config"
)

// boolCase is one way of setting (or not) a boolean setting, and what
// Load makes of it: the value, or an error naming err.
type boolCase struct {
	name string
	args []string
	env  map[string]string
	want bool
	err  string
}

// testBoolSetting loads each case and checks the setting got reads.
func testBoolSetting(t *testing.T, cases []boolCase, name string, got func(config.Config) bool) {
	t.Helper()
	for _, tc := range cases {
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
			if v := got(c); v != tc.want {
				t.Fatalf("%s = %v, want %v", name, v, tc.want)
			}
		})
	}
}

func TestSkipCarrierSignaturesSetting(t *testing.T) {
	prod := map[string]string{"AGENTLINE_ENV": "production", "AGENTLINE_SKIP_CARRIER_SIGNATURES": "true"}
	testBoolSetting(t, []boolCase{
		{name: "off by default", want: false},
		{name: "flag", args: []string{"--skip-carrier-signatures"}, want: true},
		{name: "env", env: map[string]string{"AGENTLINE_SKIP_CARRIER_SIGNATURES": "true"}, want: true},
		{name: "never in production", env: prod, err: "AGENTLINE_SKIP_CARRIER_SIGNATURES must not be set in production"},
	}, "SkipCarrierSigs", func(c config.Config) bool { return c.SkipCarrierSigs })
}
