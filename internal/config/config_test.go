package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/config"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestDefaults(t *testing.T) {
	c, err := config.Load(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		Addr: ":8080", Env: "development", DatabaseURL: "sqlite:agentline.db",
		InviteTTL: 168 * time.Hour, ResetTTL: time.Hour, NotifyBackoffList: "1s,3s,10s,30s,2m",
		MaxBodyBytes: 1 << 20, SessionTTL: 168 * time.Hour, PasswordCost: 10, ShutdownTimeout: 30 * time.Second, DrainTimeout: 30 * time.Second,
		LogLevel: "info", OpenAIBaseURL: "https://api.openai.com", GeminiBaseURL: "https://generativelanguage.googleapis.com",
		TwilioAPIBaseURL: "https://api.twilio.com", MaxConcurrentCalls: 10, MaxCallDuration: 30 * time.Minute,
		ModelReadyTimeout: 10 * time.Second, TwilioTimeout: 15 * time.Second,
		FormSubmitsPerMinute: 10, MetricsAddr: "127.0.0.1:9090", BodyReadTimeout: 30 * time.Second,
		WebhookRetrySpan: 72 * time.Hour, WebhookRetention: 720 * time.Hour, AuditRetentionDays: 365, JobRescueAfter: 5 * time.Minute, SessionIdleTimeout: 2 * time.Minute, LiveChatTimeout: 15 * time.Minute, CallReconcileAfter: 2 * time.Minute,
		AnalysisModelOpenAI: "gpt-4.1-mini", AnalysisModelGemini: "gemini-2.5-flash", AnalysisMaxAttempts: 5, AnalysisRetryBackoff: 30 * time.Second,
	}
	if c != want {
		t.Fatalf("defaults:\n got %+v\nwant %+v", c, want)
	}
	if c.Production() {
		t.Fatal("default is production")
	}
}

func TestEnvAndFlags(t *testing.T) {
	vars := map[string]string{
		"AGENTLINE_ADDR":         "127.0.0.1:9000",
		"AGENTLINE_DATABASE_URL": "postgres://u@db/agentline",
		"AGENTLINE_SESSION_TTL":  "2h",
		"TELEPHONY_ENABLED":      "true",
		"BOT_HOST":               "bot.example.com",
		"OPENAI_API_KEY":         "sk-env",
	}
	c, err := config.Load(nil, env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9000" || c.DatabaseURL != "postgres://u@db/agentline" || c.SessionTTL != 2*time.Hour ||
		!c.TelephonyEnabled || c.BotHost != "bot.example.com" || c.OpenAIAPIKey != "sk-env" {
		t.Fatalf("from env: %+v", c)
	}
	// Flags win over env, in both spellings of a flag.
	c, err = config.Load([]string{"--addr", ":7000", "-session-ttl=30m", "--telephony-enabled=false", "--openai-api-key", "sk-flag"}, env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":7000" || c.SessionTTL != 30*time.Minute || c.TelephonyEnabled || c.OpenAIAPIKey != "sk-flag" || c.BotHost != "bot.example.com" {
		t.Fatalf("flags over env: %+v", c)
	}
}

// Every bad value is an error naming its setting.
func TestBadValues(t *testing.T) {
	for _, tc := range []struct {
		vars  map[string]string
		args  []string
		names []string
	}{
		{vars: map[string]string{"AGENTLINE_ENV": "staging"}, names: []string{"AGENTLINE_ENV"}},
		{vars: map[string]string{"AGENTLINE_DATABASE_URL": "mysql://x"}, names: []string{"AGENTLINE_DATABASE_URL"}},
		{vars: map[string]string{"AGENTLINE_MAX_BODY_BYTES": "lots"}, names: []string{"AGENTLINE_MAX_BODY_BYTES"}},
		{vars: map[string]string{"AGENTLINE_MAX_BODY_BYTES": "10"}, names: []string{"AGENTLINE_MAX_BODY_BYTES"}},
		{vars: map[string]string{"AGENTLINE_SESSION_TTL": "a week"}, names: []string{"AGENTLINE_SESSION_TTL"}},
		{vars: map[string]string{"AGENTLINE_SESSION_TTL": "1s"}, names: []string{"AGENTLINE_SESSION_TTL"}},
		{vars: map[string]string{"AGENTLINE_SHUTDOWN_TIMEOUT": "0s"}, names: []string{"AGENTLINE_SHUTDOWN_TIMEOUT"}},
		{vars: map[string]string{"AGENTLINE_DRAIN_TIMEOUT": "-1s"}, names: []string{"AGENTLINE_DRAIN_TIMEOUT"}},
		{vars: map[string]string{"AGENTLINE_BODY_READ_TIMEOUT": "0s"}, names: []string{"AGENTLINE_BODY_READ_TIMEOUT"}},
		{vars: map[string]string{"AGENTLINE_PASSWORD_COST": "3"}, names: []string{"AGENTLINE_PASSWORD_COST"}},
		{vars: map[string]string{"AGENTLINE_PASSWORD_COST": "32"}, names: []string{"AGENTLINE_PASSWORD_COST"}},
		{vars: map[string]string{"AGENTLINE_AUDIT_RETENTION_DAYS": "0"}, names: []string{"AGENTLINE_AUDIT_RETENTION_DAYS"}},
		{vars: map[string]string{"AGENTLINE_LOG_LEVEL": "loud"}, names: []string{"AGENTLINE_LOG_LEVEL"}},
		{vars: map[string]string{"TELEPHONY_ENABLED": "yes please"}, names: []string{"TELEPHONY_ENABLED"}},
		{vars: map[string]string{"OPENAI_BASE_URL": "ftp://x"}, names: []string{"OPENAI_BASE_URL"}},
		{vars: map[string]string{"GEMINI_BASE_URL": "not a url"}, names: []string{"GEMINI_BASE_URL"}},
		{vars: map[string]string{"TWILIO_API_BASE_URL": "https://"}, names: []string{"TWILIO_API_BASE_URL"}},
		{vars: map[string]string{"AGENTLINE_PUBLIC_URL": "example.com"}, names: []string{"AGENTLINE_PUBLIC_URL"}},
		{vars: map[string]string{"BOT_HOST": "https://bot.example.com/"}, names: []string{"BOT_HOST"}},
		{vars: map[string]string{"AGENTLINE_ENV": "x", "AGENTLINE_LOG_LEVEL": "y"}, names: []string{"AGENTLINE_ENV", "AGENTLINE_LOG_LEVEL"}},
		{args: []string{"--env", "staging"}, names: []string{"AGENTLINE_ENV"}},
		{args: []string{"--no-such-flag"}, names: []string{"no-such-flag"}},
		{args: []string{"--session-ttl", "soon"}, names: []string{"session-ttl"}},
		{args: []string{"serve-me"}, names: []string{"serve-me"}},
	} {
		_, err := config.Load(tc.args, env(tc.vars))
		if err == nil {
			t.Errorf("%v %v: no error", tc.vars, tc.args)
			continue
		}
		for _, n := range tc.names {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%v %v: error %q does not name %s", tc.vars, tc.args, err, n)
			}
		}
	}
}

// In production, an enabled feature without its settings stops start-up
// with one line per missing name.
func TestProductionNeedsSettingsOfEnabledFeatures(t *testing.T) {
	_, err := config.Load(nil, env(map[string]string{"AGENTLINE_ENV": "production", "TELEPHONY_ENABLED": "true"}))
	if err == nil {
		t.Fatal("production telephony without settings started")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "BOT_HOST", "OPENAI_API_KEY"}
	if len(lines) != len(want) {
		t.Fatalf("want one line per missing setting, got %d:\n%s", len(lines), err)
	}
	for i, name := range want {
		if !strings.HasPrefix(lines[i], name+" is required in production") {
			t.Errorf("line %d = %q, want it to name %s", i+1, lines[i], name)
		}
	}

	// Development does not insist: the same settings start.
	if _, err := config.Load(nil, env(map[string]string{"TELEPHONY_ENABLED": "true"})); err != nil {
		t.Fatalf("development: %v", err)
	}
	// All present: production starts.
	full := map[string]string{"AGENTLINE_ENV": "production", "TELEPHONY_ENABLED": "true", "TWILIO_ACCOUNT_SID": "AC0123456789abcdef0123456789abcdef",
		"TWILIO_AUTH_TOKEN": "t", "BOT_HOST": "bot.example.com", "OPENAI_API_KEY": "sk"}
	if _, err := config.Load(nil, env(full)); err != nil {
		t.Fatalf("complete production config: %v", err)
	}
	// Production without telephony needs none of them.
	if _, err := config.Load(nil, env(map[string]string{"AGENTLINE_ENV": "production"})); err != nil {
		t.Fatalf("plain production: %v", err)
	}
	// An admin email without its password is refused in production.
	_, err = config.Load(nil, env(map[string]string{"AGENTLINE_ENV": "production", "AGENTLINE_ADMIN_EMAIL": "a@example.com"}))
	if err == nil || !strings.Contains(err.Error(), "AGENTLINE_ADMIN_PASSWORD") {
		t.Fatalf("admin email without password: %v", err)
	}
}

func TestUsageListsEverySetting(t *testing.T) {
	u := config.Usage()
	for _, name := range []string{"AGENTLINE_ADDR", "AGENTLINE_ENV", "AGENTLINE_DATABASE_URL", "AGENTLINE_REDIS_URL",
		"AGENTLINE_PUBLIC_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GEMINI_BASE_URL",
		"TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_API_BASE_URL", "TELEPHONY_ENABLED", "BOT_HOST", "AGENTLINE_SECRET"} {
		if !strings.Contains(u, "(env "+name+",") {
			t.Errorf("usage lacks %s", name)
		}
	}
}
