// Package config reads every setting of agentline from environment variables,
// lets command-line flags override them, and validates them once at start.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of a running agentline.
type Config struct {
	Addr        string // AGENTLINE_ADDR
	Env         string // AGENTLINE_ENV: development | production
	DatabaseURL string // AGENTLINE_DATABASE_URL
	RedisURL    string // AGENTLINE_REDIS_URL
	PublicURL   string // AGENTLINE_PUBLIC_URL
	Secret      string // AGENTLINE_SECRET; generated and stored when empty

	AdminEmail    string // AGENTLINE_ADMIN_EMAIL
	AdminPassword string // AGENTLINE_ADMIN_PASSWORD

	SMTPURL   string        // AGENTLINE_SMTP_URL; empty: no mail
	MailFrom  string        // AGENTLINE_MAIL_FROM
	InviteTTL time.Duration // AGENTLINE_INVITE_TTL
	ResetTTL  time.Duration // AGENTLINE_RESET_TTL

	MaxBodyBytes         int64         // AGENTLINE_MAX_BODY_BYTES
	SessionTTL           time.Duration // AGENTLINE_SESSION_TTL
	PasswordCost         int64         // AGENTLINE_PASSWORD_COST
	ShutdownTimeout      time.Duration // AGENTLINE_SHUTDOWN_TIMEOUT
	DrainTimeout         time.Duration // AGENTLINE_DRAIN_TIMEOUT
	AllowPrivateWebhooks bool          // AGENTLINE_ALLOW_PRIVATE_WEBHOOKS
	LogLevel             string        // AGENTLINE_LOG_LEVEL
	TelephonyEnabled     bool          // TELEPHONY_ENABLED
	Sandbox              bool          // AGENTLINE_SANDBOX; see DefaultSandbox
	BotHost              string        // BOT_HOST
	OpenAIAPIKey         string        // OPENAI_API_KEY
	OpenAIBaseURL        string        // OPENAI_BASE_URL
	GeminiAPIKey         string        // GEMINI_API_KEY
	GeminiBaseURL        string        // GEMINI_BASE_URL
	TwilioAccountSID     string        // TWILIO_ACCOUNT_SID
	TwilioAuthToken      string        // TWILIO_AUTH_TOKEN
	TwilioAPIBaseURL     string        // TWILIO_API_BASE_URL
	SkipCarrierSigs      bool          // AGENTLINE_SKIP_CARRIER_SIGNATURES
	MaxConcurrentCalls   int64         // AGENTLINE_MAX_CONCURRENT_CALLS
	MaxCallDuration      time.Duration // AGENTLINE_MAX_CALL_DURATION
	ModelReadyTimeout    time.Duration // AGENTLINE_MODEL_READY_TIMEOUT
	TwilioTimeout        time.Duration // TWILIO_TIMEOUT
	FormSubmitsPerMinute int64         // AGENTLINE_FORM_SUBMITS_PER_MINUTE
	TrustedProxyList     string        // AGENTLINE_TRUSTED_PROXIES; see TrustedProxies
	MetricsAddr          string        // AGENTLINE_METRICS_ADDR; see MetricsEnabled
	BodyReadTimeout      time.Duration // AGENTLINE_BODY_READ_TIMEOUT
	WebhookRetrySpan     time.Duration // AGENTLINE_WEBHOOK_RETRY_SPAN
	WebhookRetention     time.Duration // AGENTLINE_WEBHOOK_RETENTION
	AuditRetentionDays   int64         // AGENTLINE_AUDIT_RETENTION_DAYS
	JobRescueAfter       time.Duration // AGENTLINE_JOB_RESCUE_AFTER
	SessionIdleTimeout   time.Duration // AGENTLINE_SESSION_IDLE_TIMEOUT
	LiveChatTimeout      time.Duration // AGENTLINE_LIVE_CHAT_CONNECT_TIMEOUT
	CallReconcileAfter   time.Duration // AGENTLINE_CALL_RECONCILE_AFTER
	AnalysisModelOpenAI  string        // AGENTLINE_ANALYSIS_MODEL_OPENAI
	AnalysisModelGemini  string        // AGENTLINE_ANALYSIS_MODEL_GEMINI
	AnalysisMaxAttempts  int64         // AGENTLINE_ANALYSIS_MAX_ATTEMPTS
	AnalysisRetryBackoff time.Duration // AGENTLINE_ANALYSIS_RETRY_BACKOFF
	NotifyBackoffList    string        // AGENTLINE_NOTIFY_BACKOFF; see NotifyBackoff
	RecordingsDir        string        // AGENTLINE_RECORDINGS_DIR; see RecordingsDirectory
	RecordingsURL        string        // AGENTLINE_RECORDINGS_URL

	// RecordingsCredentials authenticate to the recordings bucket:
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (env
	// only, never flags: secrets stay out of the process list).
	RecordingsCredentials S3Credentials

	OIDC OIDC // AGENTLINE_OIDC_*; see oidc.go
	// Tracing exports OpenTelemetry traces: OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (env only; see tracing.go).
	Tracing bool

	// EncryptionKeys is AGENTLINE_ENCRYPTION_KEY (env only): see
	// encryption.go.
	EncryptionKeys string

	// sandboxSet records that AGENTLINE_SANDBOX or --sandbox was given,
	// so that DefaultSandbox leaves an explicit choice alone.
	sandboxSet bool
}

// MetricsEnabled reports whether /metrics is served on MetricsAddr: "off"
// (or an empty --metrics-addr) turns it off.
func (c *Config) MetricsEnabled() bool { return c.MetricsAddr != "" && c.MetricsAddr != "off" }

// RecordingsDirectory is AGENTLINE_RECORDINGS_DIR or, by default, a
// recordings directory beside the SQLite database file; on PostgreSQL (or
// an in-memory SQLite) a recordings directory in the working directory.
func (c *Config) RecordingsDirectory() string {
	if c.RecordingsDir != "" {
		return c.RecordingsDir
	}
	path, ok := strings.CutPrefix(c.DatabaseURL, "sqlite:")
	path = strings.TrimPrefix(path, "//")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if !ok || path == "" || strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return "recordings"
	}
	return filepath.Join(filepath.Dir(path), "recordings")
}

// Production reports whether the service runs in production mode.
func (c *Config) Production() bool { return c.Env == "production" }

// BaseURL is AGENTLINE_PUBLIC_URL without a trailing slash, or a local URL
// built from the listen address: where the console's links point.
func (c *Config) BaseURL() string {
	if c.PublicURL != "" {
		return strings.TrimSuffix(c.PublicURL, "/")
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return "http://localhost:8080"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// setting describes one setting: its env var, its flag, its default and where
// it goes. The table is the single source for flags, env vars and the README.
type setting struct {
	env, flag, def, usage string
	str                   *string
	boolean               *bool
	integer               *int64
	duration              *time.Duration
}

func (c *Config) settings() []setting {
	return []setting{
		{env: "AGENTLINE_ADDR", flag: "addr", def: ":8080", usage: "address to listen on", str: &c.Addr},
		{env: "AGENTLINE_ENV", flag: "env", def: "development", usage: "development or production", str: &c.Env},
		{env: "AGENTLINE_DATABASE_URL", flag: "database-url", def: "sqlite:agentline.db", usage: "sqlite:PATH or postgres://...", str: &c.DatabaseURL},
		{env: "AGENTLINE_REDIS_URL", flag: "redis-url", usage: "redis://... for rate limits shared across instances", str: &c.RedisURL},
		{env: "AGENTLINE_PUBLIC_URL", flag: "public-url", usage: "base URL used in snippets and links", str: &c.PublicURL},
		{env: "AGENTLINE_SECRET", flag: "secret", usage: "signs stream tokens; generated and stored on first start when empty", str: &c.Secret},
		{env: "AGENTLINE_ADMIN_EMAIL", flag: "admin-email", usage: "email of the owner account created on first start", str: &c.AdminEmail},
		{env: "AGENTLINE_ADMIN_PASSWORD", flag: "admin-password", usage: "password of the owner account created on first start", str: &c.AdminPassword},
		{env: "AGENTLINE_SMTP_URL", flag: "smtp-url", usage: "smtp://user:pass@host:587 (STARTTLS) or smtps://user:pass@host:465: invitations and password reset links go by email", str: &c.SMTPURL},
		{env: "AGENTLINE_MAIL_FROM", flag: "mail-from", usage: "sender of agentline's emails, such as \"agentline <noreply@example.com>\"", str: &c.MailFrom},
		{env: "AGENTLINE_OIDC_ISSUER", flag: "oidc-issuer", usage: "OpenID Connect issuer URL for single sign-on (its /.well-known/openid-configuration is read at start)", str: &c.OIDC.Issuer},
		{env: "AGENTLINE_OIDC_CLIENT_ID", flag: "oidc-client-id", usage: "client ID registered at the OpenID provider", str: &c.OIDC.ClientID},
		{env: "AGENTLINE_OIDC_CLIENT_SECRET", flag: "oidc-client-secret", usage: "client secret registered at the OpenID provider", str: &c.OIDC.ClientSecret},
		{env: "AGENTLINE_OIDC_ALLOWED_DOMAINS", flag: "oidc-allowed-domains", usage: "comma-separated email domains that may sign in with single sign-on (empty: any)", str: &c.OIDC.AllowedDomainList},
		{env: "AGENTLINE_OIDC_ONLY", flag: "oidc-only", def: "false", usage: "refuse passwords for everyone but instance administrators: sign in with single sign-on", boolean: &c.OIDC.Only},
		{env: "AGENTLINE_INVITE_TTL", flag: "invite-ttl", def: "168h", usage: "how long an invitation to a project can be accepted", duration: &c.InviteTTL},
		{env: "AGENTLINE_RESET_TTL", flag: "reset-ttl", def: "1h", usage: "how long a password reset link works", duration: &c.ResetTTL},
		{env: "AGENTLINE_MAX_BODY_BYTES", flag: "max-body-bytes", def: "1048576", usage: "largest request body accepted", integer: &c.MaxBodyBytes},
		{env: "AGENTLINE_SESSION_TTL", flag: "session-ttl", def: "168h", usage: "how long a console sign-in lasts", duration: &c.SessionTTL},
		{env: "AGENTLINE_PASSWORD_COST", flag: "password-cost", def: "10", usage: "bcrypt cost of password hashes (4 to 31; each step doubles the work)", integer: &c.PasswordCost},
		{env: "AGENTLINE_SHUTDOWN_TIMEOUT", flag: "shutdown-timeout", def: "30s", usage: "how long shutdown waits for requests in flight", duration: &c.ShutdownTimeout},
		{env: "AGENTLINE_DRAIN_TIMEOUT", flag: "drain-timeout", def: "30s", usage: "on SIGTERM, how long live phone calls may go on (new calls and sessions refused, /readyz 503) before they are ended; 0s ends them at once", duration: &c.DrainTimeout},
		{env: "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS", flag: "allow-private-webhooks", def: "false", usage: "let webhook tools, notify_url and event webhooks use loopback and private addresses", boolean: &c.AllowPrivateWebhooks},
		{env: "AGENTLINE_LOG_LEVEL", flag: "log-level", def: "info", usage: "debug, info, warn or error", str: &c.LogLevel},
		{env: "AGENTLINE_SANDBOX", flag: "sandbox", def: "false", usage: "serve a pretend OpenAI-compatible provider and point OpenAI-kind agents at it, to try the widget with no API key (never in production)", boolean: &c.Sandbox},
		{env: "TELEPHONY_ENABLED", flag: "telephony-enabled", def: "false", usage: "enable the phone channel", boolean: &c.TelephonyEnabled},
		{env: "BOT_HOST", flag: "bot-host", usage: "public host name the carrier reaches for webhooks and streams", str: &c.BotHost},
		{env: "OPENAI_API_KEY", flag: "openai-api-key", usage: "API key of the OpenAI-compatible realtime provider", str: &c.OpenAIAPIKey},
		{env: "OPENAI_BASE_URL", flag: "openai-base-url", def: "https://api.openai.com", usage: "base URL of the OpenAI-compatible realtime provider", str: &c.OpenAIBaseURL},
		{env: "GEMINI_API_KEY", flag: "gemini-api-key", usage: "API key of the Gemini-compatible live provider", str: &c.GeminiAPIKey},
		{env: "GEMINI_BASE_URL", flag: "gemini-base-url", def: "https://generativelanguage.googleapis.com", usage: "base URL of the Gemini-compatible live provider", str: &c.GeminiBaseURL},
		{env: "TWILIO_ACCOUNT_SID", flag: "twilio-account-sid", usage: "carrier account SID", str: &c.TwilioAccountSID},
		{env: "TWILIO_AUTH_TOKEN", flag: "twilio-auth-token", usage: "carrier auth token, also used to check webhook signatures", str: &c.TwilioAuthToken},
		{env: "AGENTLINE_SKIP_CARRIER_SIGNATURES", flag: "skip-carrier-signatures", def: "false", usage: "accept carrier webhooks and media streams without a valid X-Twilio-Signature (development only; refused in production)", boolean: &c.SkipCarrierSigs},
		{env: "TWILIO_API_BASE_URL", flag: "twilio-api-base-url", def: "https://api.twilio.com", usage: "base URL of the carrier REST API", str: &c.TwilioAPIBaseURL},
		{env: "AGENTLINE_MAX_CONCURRENT_CALLS", flag: "max-concurrent-calls", def: "10", usage: "most live phone calls per project; more outbound calls get 429", integer: &c.MaxConcurrentCalls},
		{env: "AGENTLINE_MAX_CALL_DURATION", flag: "max-call-duration", def: "30m", usage: "longest a phone call may last; the relay hangs up then", duration: &c.MaxCallDuration},
		{env: "AGENTLINE_MODEL_READY_TIMEOUT", flag: "model-ready-timeout", def: "10s", usage: "how long a call waits for the realtime model to take its session; then the caller hears an apology", duration: &c.ModelReadyTimeout},
		{env: "TWILIO_TIMEOUT", flag: "twilio-timeout", def: "15s", usage: "how long a carrier REST request may take", duration: &c.TwilioTimeout},
		{env: "AGENTLINE_FORM_SUBMITS_PER_MINUTE", flag: "form-submits-per-minute", def: "10", usage: "form submissions one client IP may make per minute; more get 429", integer: &c.FormSubmitsPerMinute},
		{env: "AGENTLINE_BODY_READ_TIMEOUT", flag: "body-read-timeout", def: "30s", usage: "how long a request body may take to arrive; a slower client is cut off", duration: &c.BodyReadTimeout},
		{env: "AGENTLINE_METRICS_ADDR", flag: "metrics-addr", def: "127.0.0.1:9090", usage: "address of the separate listener serving /metrics (Prometheus text); off disables it", str: &c.MetricsAddr},
		{env: "AGENTLINE_TRUSTED_PROXIES", flag: "trusted-proxies", usage: "comma-separated CIDRs of reverse proxies whose X-Forwarded-For or Forwarded header names the client; empty trusts none", str: &c.TrustedProxyList},
		{env: "AGENTLINE_JOB_RESCUE_AFTER", flag: "job-rescue-after", def: "5m", usage: "how long a background job may run before it counts as stuck (its instance died) and runs again; at least 15s", duration: &c.JobRescueAfter},
		{env: "AGENTLINE_WEBHOOK_RETRY_SPAN", flag: "webhook-retry-span", def: "72h", usage: "how long an event webhook delivery is retried (the schedule scales with it) and an endpoint may fail before it is disabled", duration: &c.WebhookRetrySpan},
		{env: "AGENTLINE_WEBHOOK_RETENTION", flag: "webhook-retention", def: "720h", usage: "how long finished event webhook deliveries, their attempts and their events are kept (pending ones are kept until they finish)", duration: &c.WebhookRetention},
		{env: "AGENTLINE_AUDIT_RETENTION_DAYS", flag: "audit-retention-days", def: "365", usage: "days the audit log keeps an entry; older ones are pruned daily", integer: &c.AuditRetentionDays},
		{env: "AGENTLINE_SESSION_IDLE_TIMEOUT", flag: "session-idle-timeout", def: "2m", usage: "a widget conversation with no event (heartbeats included) for this long ends as abandoned", duration: &c.SessionIdleTimeout},
		{env: "AGENTLINE_LIVE_CHAT_CONNECT_TIMEOUT", flag: "live-chat-connect-timeout", def: "15m", usage: "a live chat started from a form that never connects within this long ends as abandoned", duration: &c.LiveChatTimeout},
		{env: "AGENTLINE_CALL_RECONCILE_AFTER", flag: "call-reconcile-after", def: "2m", usage: "a phone call still live in the records with no news for this long is checked with the carrier, which ends it if it has ended there", duration: &c.CallReconcileAfter},
		{env: "AGENTLINE_ANALYSIS_MODEL_OPENAI", flag: "analysis-model-openai", def: "gpt-4.1-mini", usage: "text model that analyses the conversations of OpenAI-kind agents (Responses API)", str: &c.AnalysisModelOpenAI},
		{env: "AGENTLINE_ANALYSIS_MODEL_GEMINI", flag: "analysis-model-gemini", def: "gemini-2.5-flash", usage: "text model that analyses the conversations of Gemini-kind agents (generateContent)", str: &c.AnalysisModelGemini},
		{env: "AGENTLINE_ANALYSIS_MAX_ATTEMPTS", flag: "analysis-max-attempts", def: "5", usage: "attempts at one conversation's analysis before it ends failed", integer: &c.AnalysisMaxAttempts},
		{env: "AGENTLINE_NOTIFY_BACKOFF", flag: "notify-backoff", def: "1s,3s,10s,30s,2m", usage: "waits before each retry of a form's notify_url delivery, comma-separated; their number is the number of retries", str: &c.NotifyBackoffList},
		{env: "AGENTLINE_ANALYSIS_RETRY_BACKOFF", flag: "analysis-retry-backoff", def: "30s", usage: "wait after an analysis attempt failed; doubles after each attempt", duration: &c.AnalysisRetryBackoff},
		{env: "AGENTLINE_RECORDINGS_DIR", flag: "recordings-dir", usage: "directory of call recordings (default: recordings beside the SQLite file, or in the working directory); with AGENTLINE_RECORDINGS_URL, where recordings wait for upload", str: &c.RecordingsDir},
		{env: "AGENTLINE_RECORDINGS_URL", flag: "recordings-url", usage: "s3://bucket/prefix?endpoint=host:port&region=r&secure=false: keep call recordings in an S3-compatible bucket (credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)", str: &c.RecordingsURL},
	}
}

// Load reads settings from getenv, then from flags in args (flags win),
// applies the sandbox's settings (ApplySandbox), and validates the result. Unknown flags and bad values are errors.
func Load(args []string, getenv func(string) string) (Config, error) {
	fs := flag.NewFlagSet("agentline serve", flag.ContinueOnError)
	c, err := Register(fs, getenv)
	if err != nil {
		return Config{}, err
	}
	if err := Parse(fs, args); err != nil {
		return Config{}, err
	}
	c.sandboxSet = getenv("AGENTLINE_SANDBOX") != ""
	c.RecordingsCredentials = s3CredentialsFromEnv(getenv)
	c.Tracing = tracingFromEnv(getenv)
	fs.Visit(func(f *flag.Flag) { c.sandboxSet = c.sandboxSet || f.Name == "sandbox" })
	c.ApplySandbox()
	return *c, c.Validate()
}

// Register defines a flag on fs for every setting, with the value from
// getenv (or the default) as the flag's default. Callers may add flags of
// their own, then call Parse and Validate.
func Register(fs *flag.FlagSet, getenv func(string) string) (*Config, error) {
	c := &Config{EncryptionKeys: getenv("AGENTLINE_ENCRYPTION_KEY")}
	fs.SetOutput(io.Discard)
	var errs []error
	for _, s := range c.settings() {
		v := s.def
		if e := getenv(s.env); e != "" {
			v = e
		}
		if err := s.set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.env, err))
		}
		usage := s.usage + " (env " + s.env + ")"
		switch {
		case s.str != nil:
			fs.StringVar(s.str, s.flag, *s.str, usage)
		case s.boolean != nil:
			fs.BoolVar(s.boolean, s.flag, *s.boolean, usage)
		case s.integer != nil:
			fs.Int64Var(s.integer, s.flag, *s.integer, usage)
		case s.duration != nil:
			fs.DurationVar(s.duration, s.flag, *s.duration, usage)
		}
	}
	return c, errors.Join(errs...)
}

// Parse parses args into fs and refuses positional arguments.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			var b strings.Builder
			fs.SetOutput(&b)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			return &HelpError{Usage: fmt.Sprintf("flags of %s:\n%s", fs.Name(), b.String())}
		}
		return fmt.Errorf("%w (run with -h for the list of flags)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// HelpError is what Parse returns for -h or --help: asked-for help, not a
// failure, so the command prints Usage and exits 0. It matches flag.ErrHelp.
type HelpError struct{ Usage string }

func (e *HelpError) Error() string { return e.Usage }

// Unwrap lets errors.Is(err, flag.ErrHelp) find it.
func (e *HelpError) Unwrap() error { return flag.ErrHelp }

func (s setting) set(v string) error {
	switch {
	case s.str != nil:
		*s.str = v
	case s.boolean != nil:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*s.boolean = b
	case s.integer != nil:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", v)
		}
		*s.integer = n
	case s.duration != nil:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 30s or 5m", v)
		}
		*s.duration = d
	}
	return nil
}

// Validate checks the values and, in production, that every setting an
// enabled feature needs is present: one line per missing name.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Env != "development" && c.Env != "production" {
		bad("AGENTLINE_ENV must be development or production, not %q", c.Env)
	}
	if !strings.HasPrefix(c.DatabaseURL, "sqlite:") && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		bad("AGENTLINE_DATABASE_URL must start with sqlite: or postgres://")
	}
	if c.MaxBodyBytes < 1024 {
		bad("AGENTLINE_MAX_BODY_BYTES must be at least 1024")
	}
	if c.SessionTTL < time.Minute {
		bad("AGENTLINE_SESSION_TTL must be at least 1m")
	}
	if c.PasswordCost < 4 || c.PasswordCost > 31 {
		bad("AGENTLINE_PASSWORD_COST must be between 4 and 31, not %d", c.PasswordCost)
	}
	if c.MaxConcurrentCalls < 1 {
		bad("AGENTLINE_MAX_CONCURRENT_CALLS must be at least 1")
	}
	if c.AnalysisMaxAttempts < 1 || c.AnalysisMaxAttempts > 25 {
		bad("AGENTLINE_ANALYSIS_MAX_ATTEMPTS must be between 1 and 25")
	}
	if c.AnalysisModelOpenAI == "" || c.AnalysisModelGemini == "" {
		bad("AGENTLINE_ANALYSIS_MODEL_OPENAI and AGENTLINE_ANALYSIS_MODEL_GEMINI must not be empty")
	}
	errs = append(errs, c.mailErrors()...)
	if c.FormSubmitsPerMinute < 1 {
		bad("AGENTLINE_FORM_SUBMITS_PER_MINUTE must be at least 1")
	}
	errs = append(errs, c.durationErrors()...)
	if c.DrainTimeout < 0 {
		bad("AGENTLINE_DRAIN_TIMEOUT must not be negative")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("AGENTLINE_LOG_LEVEL must be debug, info, warn or error")
	}
	for name, u := range map[string]string{
		"AGENTLINE_PUBLIC_URL": c.PublicURL, "OPENAI_BASE_URL": c.OpenAIBaseURL,
		"GEMINI_BASE_URL": c.GeminiBaseURL, "TWILIO_API_BASE_URL": c.TwilioAPIBaseURL,
	} {
		// In sandbox mode OPENAI_BASE_URL is computed from
		// AGENTLINE_PUBLIC_URL (ApplySandbox), which is checked itself:
		// a bad one is reported once, under the name that was set.
		if u == "" || name == "OPENAI_BASE_URL" && c.Sandbox {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			bad("%s must be an http(s) URL, not %q", name, u)
		}
	}
	if c.RecordingsURL != "" && !strings.HasPrefix(c.RecordingsURL, "s3://") {
		bad("AGENTLINE_RECORDINGS_URL must be an s3://bucket/prefix URL, not %q", c.RecordingsURL)
	}
	if strings.Contains(c.BotHost, "/") {
		bad("BOT_HOST must be a host name (with an optional port), not a URL: %q", c.BotHost)
	}
	errs = append(errs, c.edgeErrors()...)
	errs = append(errs, c.encryptionErrors()...)
	errs = append(errs, c.oidcErrors()...)
	errs = append(errs, c.carrierCredentialErrors()...)
	if c.Sandbox && c.Production() {
		bad("AGENTLINE_SANDBOX must not be set in production: its provider is pretend")
	}
	if c.SkipCarrierSigs && c.Production() {
		bad("AGENTLINE_SKIP_CARRIER_SIGNATURES must not be set in production: anyone could open calls to the model")
	}
	if c.Production() {
		for _, m := range c.missing() {
			bad("%s is required in production: %s", m.name, m.why)
		}
	}
	return errors.Join(errs...)
}

// Usage lists every setting with its env var, flag and default, one per line.
func Usage() string {
	var c Config
	var b strings.Builder
	for _, s := range c.settings() {
		fmt.Fprintf(&b, "  -%s (env %s, default %q): %s\n", s.flag, s.env, s.def, s.usage)
	}
	return b.String()
}
