// The checks Validate runs beyond each setting's own type.

package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// mailErrors checks the settings of what agentline sends by itself: the
// mail settings go together, and the notify_url retries parse. The SMTP
// URL and the sender address themselves are checked by internal/mail, the
// one place that knows what it can send through, when the app builds its
// sender at start (app.New fails then, naming the setting).
func (c *Config) mailErrors() []error {
	var errs []error
	if c.SMTPURL == "" && c.MailFrom != "" {
		errs = append(errs, errors.New("AGENTLINE_MAIL_FROM is set but AGENTLINE_SMTP_URL is not: set both to send invitations and reset links by email"))
	}
	if _, err := c.NotifyBackoff(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// NotifyBackoff is AGENTLINE_NOTIFY_BACKOFF: the wait before each retry
// of a notify_url delivery.
func (c *Config) NotifyBackoff() ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(c.NotifyBackoffList, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("AGENTLINE_NOTIFY_BACKOFF must list positive durations, such as 1s,3s,10s,30s,2m, not %q", c.NotifyBackoffList)
		}
		out = append(out, d)
	}
	return out, nil
}

// durationErrors checks the settings that are durations: each must be
// positive, and a job may run for as long as its slowest kind needs.
func (c *Config) durationErrors() []error {
	var errs []error
	for _, d := range []struct {
		name, example string
		v             time.Duration
	}{
		{"AGENTLINE_WEBHOOK_RETRY_SPAN", "72h", c.WebhookRetrySpan},
		{"AGENTLINE_WEBHOOK_RETENTION", "720h", c.WebhookRetention},
		{"AGENTLINE_JOB_RESCUE_AFTER", "5m", c.JobRescueAfter},
		{"AGENTLINE_SESSION_IDLE_TIMEOUT", "2m", c.SessionIdleTimeout},
		{"AGENTLINE_LIVE_CHAT_CONNECT_TIMEOUT", "15m", c.LiveChatTimeout},
		{"AGENTLINE_CALL_RECONCILE_AFTER", "2m", c.CallReconcileAfter},
		{"AGENTLINE_ANALYSIS_RETRY_BACKOFF", "30s", c.AnalysisRetryBackoff},
		{"AGENTLINE_MAX_CALL_DURATION", "30m", c.MaxCallDuration},
		{"AGENTLINE_MODEL_READY_TIMEOUT", "10s", c.ModelReadyTimeout},
		{"TWILIO_TIMEOUT", "15s", c.TwilioTimeout},
		{"AGENTLINE_SHUTDOWN_TIMEOUT", "30s", c.ShutdownTimeout},
		{"AGENTLINE_INVITE_TTL", "168h", c.InviteTTL},
		{"AGENTLINE_RESET_TTL", "1h", c.ResetTTL},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, such as %s", d.name, d.example))
		}
	}
	if c.AuditRetentionDays < 1 || c.AuditRetentionDays > 36500 {
		errs = append(errs, fmt.Errorf("AGENTLINE_AUDIT_RETENTION_DAYS must be between 1 and 36500 (100 years), not %d", c.AuditRetentionDays))
	}
	if c.JobRescueAfter > 0 && c.JobRescueAfter < 15*time.Second {
		errs = append(errs, errors.New("AGENTLINE_JOB_RESCUE_AFTER must be at least 15s: a webhook delivery alone may take 10s"))
	}
	return errs
}

type missingSetting struct{ name, why string }

func (c *Config) missing() []missingSetting {
	var out []missingSetting
	need := func(v, name, why string) {
		if v == "" {
			out = append(out, missingSetting{name, why})
		}
	}
	if c.TelephonyEnabled {
		why := "TELEPHONY_ENABLED=true needs it"
		need(c.TwilioAccountSID, "TWILIO_ACCOUNT_SID", why)
		need(c.TwilioAuthToken, "TWILIO_AUTH_TOKEN", why)
		need(c.BotHost, "BOT_HOST", why)
		need(c.OpenAIAPIKey, "OPENAI_API_KEY", why+" (calls run on the OpenAI-compatible realtime provider)")
	}
	if c.SMTPURL != "" {
		need(c.PublicURL, "AGENTLINE_PUBLIC_URL", "AGENTLINE_SMTP_URL is set (mailed links point at the console)")
	}
	if c.AdminPassword == "" && c.AdminEmail != "" {
		need(c.AdminPassword, "AGENTLINE_ADMIN_PASSWORD", "AGENTLINE_ADMIN_EMAIL is set")
	}
	return out
}
