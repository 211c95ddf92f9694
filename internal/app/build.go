package app

// The object graph: build makes every part of the app once, in one order,
// each from the parts made before it and passed to its constructor, which
// keeps what it needs privately. Nothing here lists a route (mount does) or
// serves (Serve does).

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/mail"
	"github.com/agentline/agentline/internal/provider/sandbox"
	"github.com/agentline/agentline/internal/provideraccount"
	"github.com/agentline/agentline/internal/ratelimit"
	"github.com/agentline/agentline/internal/recording"
	"github.com/agentline/agentline/internal/secretbox"
	"github.com/agentline/agentline/internal/telephony"
	phonecarrier "github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/tools"
)

// build makes the app's parts in this order: the foundation (schema,
// secret, accounts, metrics), the services that handlers and job workers
// share (tools, rate limiter, sandbox provider, carrier, recordings), the
// job queue with the worker of every job kind, and every package's
// handler. sender is nil when mail is off.
func (a *App) build(ctx context.Context, sender *mail.Sender, stdout io.Writer) error {
	var err error
	if a.tracing, err = a.startTracing(ctx); err != nil {
		return err
	}
	if err := a.foundation(ctx, sender != nil, stdout); err != nil {
		return err
	}
	s, err := a.services(ctx)
	if err != nil {
		return err
	}
	// The phone channel comes before the job queue: the campaign engine, a
	// job worker, places its calls through it.
	s.phone = a.phoneHandler(s)
	if err := a.jobQueue(ctx, s, sender); err != nil {
		return err
	}
	h, err := a.newHandlers(s)
	if err != nil {
		return err
	}
	a.handlers = h
	return nil
}

// mailSender is the sender of AGENTLINE_SMTP_URL, or nil without one.
// internal/mail alone knows what it can send through: New makes the sender
// first, before the database is opened, so that a bad URL or sender
// address stops the start with mail's message, which names the setting.
func mailSender(cfg config.Config) (*mail.Sender, error) {
	if cfg.SMTPURL == "" {
		return nil, nil
	}
	return mail.New(mail.Config{URL: cfg.SMTPURL, From: cfg.MailFrom})
}

// foundation migrates the schema, settles the secret, makes the auth
// service (mailing links when mail is on) and the first account, and
// registers the runtime's metrics.
func (a *App) foundation(ctx context.Context, mailOn bool, stdout io.Writer) error {
	if err := a.Store.Migrate(ctx); err != nil {
		return err
	}
	a.Secret = a.Config.Secret
	if a.Secret == "" {
		s, err := a.Store.EnsureSetting(ctx, "agentline_secret", randomString(32))
		if err != nil {
			return err
		}
		a.Secret = s
	}
	box, err := secretbox.Settle(secretbox.Settings{Keys: a.Config.EncryptionKeys, Production: a.Config.Production(),
		KeyFile: a.Config.EncryptionKeyFile(), Logger: a.logger})
	if err != nil {
		return err
	}
	a.Secrets = box
	authOpts := []auth.Option{auth.WithPasswordCost(int(a.Config.PasswordCost)), auth.WithLinkTTLs(a.Config.InviteTTL, a.Config.ResetTTL)}
	if mailOn {
		authOpts = append(authOpts, auth.WithMail(a.enqueueMail))
	}
	if o := a.Config.OIDC; o.Enabled() && o.Only {
		authOpts = append(authOpts, auth.WithSSOOnly(auth.ProviderName(o.Issuer)))
	}
	a.Auth = auth.New(a.Store, a.Config.SessionTTL, authOpts...)
	if err := a.bootstrapOwner(ctx, stdout); err != nil {
		return err
	}
	a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return nil
}

// enqueueMail queues a mail job (a reset link) through the store's outbox,
// in a transaction of its own, as an invitation's job is queued with its
// invitation. The job queue cannot be handed to the auth service: its mail
// workers need that service, so it is built after it, and connected to the
// outbox before anything is served.
func (a *App) enqueueMail(ctx context.Context, j agentline.Job) error {
	return a.Store.WithOutbox(ctx, func(ctx context.Context, out agentline.Outbox) error { return out.Enqueue(ctx, j) })
}

// bootstrapOwner creates the first account when there is no user at all.
func (a *App) bootstrapOwner(ctx context.Context, stdout io.Writer) error {
	n, err := a.Store.CountUsers(ctx)
	if err != nil || n > 0 {
		return err
	}
	email, password, generated := a.Config.AdminEmail, a.Config.AdminPassword, false
	if email == "" {
		email = "admin@localhost"
	}
	if password == "" {
		password, generated = randomString(18), true
	}
	u, err := a.Auth.CreateUser(ctx, email, password)
	if agentline.ErrorCode(err) == agentline.EConflict {
		return nil // another instance starting at the same time made it
	}
	if err != nil {
		return fmt.Errorf("create owner account: %w", err)
	}
	a.logger.Info("created the first account, an instance administrator", "email", u.Email, "user_id", u.ID, "admin", u.Admin)
	if generated {
		fmt.Fprintf(stdout, "\nagentline: created the first account (shown once, keep it):\n  email:    %s\n  password: %s\n  sign in:  %s/\n\n",
			u.Email, password, a.Config.BaseURL())
	}
	return nil
}

// shared is what both the handlers and the job workers use, made before
// either.
type shared struct {
	limiter ratelimit.Limiter
	// carrier is nil without a carrier account (or the sandbox's pretend
	// one): the routes that need it answer 503 and no call is reconciled.
	carrier phonecarrier.Carrier
	// carrierToken checks the carrier's signatures.
	carrierToken string
	// recordings is nil when no call can be taken (see openRecordings).
	recordings *recording.Calls
	// phone is the phone channel's handler, made after the rest (it hears
	// campaign calls' machine verdicts) and before the job queue.
	phone *telephony.Handler
	// providers resolves each project's provider credentials: its own
	// provider account's, or the deployment's settings.
	providers *provideraccount.Accounts
}

// services makes the sandbox provider (in sandbox mode), the tool
// facility, the rate limiter, the carrier client and the recordings.
func (a *App) services(ctx context.Context) (shared, error) {
	var s shared
	if a.Config.Sandbox {
		// config.ApplySandbox pointed OpenAI-kind agents at it.
		a.Sandbox = sandbox.New(a.logger)
		a.closers = append(a.closers, a.Sandbox)
		a.logger.Warn("sandbox provider on: OpenAI-kind agents talk to a pretend provider", "url", a.Config.OpenAIBaseURL)
	}
	a.Tools = tools.New(a.Store, tools.Options{
		AllowPrivateWebhooks: a.Config.AllowPrivateWebhooks, Registerer: a.registry, Logger: a.logger, Sealer: a.Secrets,
	})
	a.closers = append(a.closers, a.Tools)
	s.providers = provideraccount.New(provideraccount.Options{
		Store: a.Store, Sealer: a.Secrets, AllowPrivate: a.Config.AllowPrivateWebhooks, Production: a.Config.Production(),
		Client: a.projectHTTP(10 * time.Second), Logger: a.logger, Tracing: a.tracing,
		Deployment: map[agentline.Provider]agentline.ProviderCredentials{
			agentline.ProviderOpenAI: {BaseURL: a.Config.OpenAIBaseURL, APIKey: a.Config.OpenAIAPIKey},
			agentline.ProviderGemini: {BaseURL: a.Config.GeminiBaseURL, APIKey: a.Config.GeminiAPIKey},
		},
	})
	var err error
	if s.limiter, err = a.rateLimiter(ctx); err != nil {
		return s, err
	}
	if s.carrier, s.carrierToken, err = a.phoneCarrier(); err != nil {
		return s, err
	}
	if s.recordings, err = a.openRecordings(); err != nil {
		return s, err
	}
	return s, nil
}

// rateLimiter counts widget requests in Redis when AGENTLINE_REDIS_URL is
// set, so that every instance shares the limits (per instance, in memory,
// while Redis does not answer), and in memory otherwise.
func (a *App) rateLimiter(ctx context.Context) (ratelimit.Limiter, error) {
	if a.Config.RedisURL == "" {
		return ratelimit.NewMemory(), nil
	}
	r, err := ratelimit.NewRedis(ctx, a.Config.RedisURL, ratelimit.RedisOptions{Logger: a.logger, Registerer: a.registry})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, r)
	return r, nil
}

// phoneCarrier is the carrier client of the configured account, or, in
// the sandbox with no account, of the sandbox's pretend Twilio
// (sandboxphone.go); nil otherwise. token is the one the carrier's
// signatures are checked with.
func (a *App) phoneCarrier() (c phonecarrier.Carrier, token string, err error) {
	token = a.Config.TwilioAuthToken
	if a.Config.TwilioAccountSID != "" && a.Config.TwilioAuthToken != "" {
		t, err := phonecarrier.NewTwilio(phonecarrier.TwilioConfig{
			AccountSID: a.Config.TwilioAccountSID, AuthToken: a.Config.TwilioAuthToken, BaseURL: a.Config.TwilioAPIBaseURL,
			Timeout: a.Config.TwilioTimeout,
		})
		if err != nil {
			return nil, "", err
		}
		return t, token, nil
	}
	if a.usesSandboxCarrier() {
		// With the phone channel off nothing could use it, and announcing
		// it would mislead.
		return a.sandboxCarrier(token)
	}
	return nil, token, nil
}

// usesSandboxCarrier says the phone channel buys its numbers from the
// sandbox's pretend Twilio: the sandbox and telephony are on, and no
// carrier account is configured. With the phone channel off nothing could
// use it.
func (a *App) usesSandboxCarrier() bool {
	return a.Config.Sandbox && a.Config.TelephonyEnabled && (a.Config.TwilioAccountSID == "" || a.Config.TwilioAuthToken == "")
}
