package config

import (
	"strings"
	"testing"
)

func TestTelephonySettings(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	c, err := Load(nil, env(nil))
	if err != nil || c.MaxConcurrentCalls != 10 || c.TelephonyEnabled || c.TwilioAPIBaseURL != "https://api.twilio.com" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	if c, err := Load([]string{"-max-concurrent-calls", "3"}, env(nil)); err != nil || c.MaxConcurrentCalls != 3 {
		t.Fatalf("flag: %d %v", c.MaxConcurrentCalls, err)
	}
	for _, bad := range []string{"0", "-1", "ten"} {
		if _, err := Load(nil, env(map[string]string{"AGENTLINE_MAX_CONCURRENT_CALLS": bad})); err == nil || !strings.Contains(err.Error(), "AGENTLINE_MAX_CONCURRENT_CALLS") {
			t.Errorf("AGENTLINE_MAX_CONCURRENT_CALLS=%s: %v", bad, err)
		}
	}

	// In production, telephony needs the carrier account, the realtime key
	// and BOT_HOST: one line naming each missing setting.
	_, err = Load(nil, env(map[string]string{"AGENTLINE_ENV": "production", "TELEPHONY_ENABLED": "true"}))
	for _, name := range []string{"TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "BOT_HOST", "OPENAI_API_KEY"} {
		if err == nil || !strings.Contains(err.Error(), name+" is required in production") {
			t.Errorf("missing %s not reported: %v", name, err)
		}
	}
	full := map[string]string{"AGENTLINE_ENV": "production", "TELEPHONY_ENABLED": "true", "TWILIO_ACCOUNT_SID": "AC0123456789abcdef0123456789abcdef", "TWILIO_AUTH_TOKEN": "t",
		"BOT_HOST": "bot.example.com", "OPENAI_API_KEY": "sk"}
	if _, err := Load(nil, env(full)); err != nil {
		t.Fatalf("complete production telephony settings: %v", err)
	}
	// Outside production, or with telephony off, nothing is required.
	if _, err := Load(nil, env(map[string]string{"TELEPHONY_ENABLED": "true"})); err != nil {
		t.Fatalf("development: %v", err)
	}
	if _, err := Load(nil, env(map[string]string{"AGENTLINE_ENV": "production"})); err != nil {
		t.Fatalf("production without telephony: %v", err)
	}
}
