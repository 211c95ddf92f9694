package config_test

import (
	"testing"

	"github.com/agentline/agentline/internal/config"
)

func TestSandboxSetting(t *testing.T) {
	testBoolSetting(t, []boolCase{
		{name: "off by default", want: false},
		{name: "flag", args: []string{"--sandbox"}, want: true},
		{name: "env", env: map[string]string{"AGENTLINE_SANDBOX": "true"}, want: true},
		{name: "never in production", args: []string{"--sandbox"}, env: map[string]string{"AGENTLINE_ENV": "production"}, err: "AGENTLINE_SANDBOX must not be set in production"},
		{name: "not a boolean", env: map[string]string{"AGENTLINE_SANDBOX": "maybe"}, err: "AGENTLINE_SANDBOX"},
	}, "Sandbox", func(c config.Config) bool { return c.Sandbox })
}

func TestDefaultSandbox(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want bool // Sandbox after DefaultSandbox
		on   bool // DefaultSandbox reports it turned it on
	}{
		{name: "development without a key", want: true, on: true},
		{name: "with an OpenAI key", env: map[string]string{"OPENAI_API_KEY": "sk-test"}, want: false},
		{name: "explicitly off", env: map[string]string{"AGENTLINE_SANDBOX": "false"}, want: false},
		{name: "explicitly off by flag", args: []string{"--sandbox=false"}, want: false},
		{name: "explicitly on", env: map[string]string{"AGENTLINE_SANDBOX": "true"}, want: true},
		{name: "never in production", env: map[string]string{"AGENTLINE_ENV": "production"}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(tc.args, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			on := c.DefaultSandbox()
			if c.Sandbox != tc.want || on != tc.on {
				t.Fatalf("Sandbox = %v (turned on: %v), want %v (%v)", c.Sandbox, on, tc.want, tc.on)
			}
		})
	}
}
