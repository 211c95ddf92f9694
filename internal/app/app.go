// Package app wires agentline together: configuration, storage, the HTTP
// routes of every package, and the server's life cycle. cmd/agentline and the
// end-to-end tests both start it.
package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/provider/sandbox"
	"github.com/agentline/agentline/internal/ratelimit"
	"github.com/agentline/agentline/internal/recording"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony"
	phonecarrier "github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/tools"
	"github.com/agentline/agentline/internal/widget"
)

// App is one running agentline.
type App struct {
	Config   config.Config
	Logger   *slog.Logger
	Store    *store.DB
	Auth     *auth.Service
	Registry *prometheus.Registry
	// Sandbox is the pretend OpenAI-compatible provider of --sandbox; nil
	// otherwise.
	Sandbox *sandbox.Server
	// Tools runs agents' tool calls for widget sessions and phone calls.
	Tools *tools.Facility
	// Secret signs stream tokens: AGENTLINE_SECRET, or the one generated and
	// stored on first start.
	Secret string

	routes  []httpx.Route
	handler http.Handler
	closers []io.Closer
	phone   *telephony.Handler // ends live calls on shutdown
	widget  *widget.Handler    // refuses new sessions while draining
	// carrier is the carrier client telephony built, shared by the phone
	// handler and the reconciler; nil without a carrier account.
	carrier phonecarrier.Carrier
	// jobs runs durable jobs (webhook and notify_url deliveries, sweeps)
	// while Run serves.
	jobs *jobs.Queue
	// reconciler asks the carrier about calls left live (ReconcileCalls).
	reconciler *telephony.Reconciler
	// draining is set on shutdown, before the drain: /readyz answers 503.
	draining atomic.Bool
	// recordings keeps phone call recordings; nil when the phone channel
	// (and the sandbox) is off.
	recordings *recording.Calls
}

// New opens and migrates the database, makes sure a secret and an owner
// account exist (printing a generated password once on stdout), and builds
// every route.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger, stdout io.Writer) (*App, error) {
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	a := &App{Config: cfg, Logger: logger, Store: db, Registry: prometheus.NewRegistry()}
	if err := a.init(ctx, stdout); err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

// init makes the foundation (schema, secret, accounts, metrics), then
// mounts every package's routes behind the edge.
func (a *App) init(ctx context.Context, stdout io.Writer) error {
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
	authOpts := []auth.Option{auth.WithPasswordCost(int(a.Config.PasswordCost)), auth.WithLinkTTLs(a.Config.InviteTTL, a.Config.ResetTTL)}
	if a.Config.SMTPURL != "" {
		// The queue is built with the routes, before anything is served.
		authOpts = append(authOpts, auth.WithMail(func(ctx context.Context, j agentline.Job) error { return a.jobs.Enqueue(ctx, j) }))
	}
	a.Auth = auth.New(a.Store, a.Config.SessionTTL, authOpts...)
	if err := a.bootstrapOwner(ctx, stdout); err != nil {
		return err
	}
	a.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if a.Config.Sandbox {
		// OpenAI-kind agents talk to the sandbox provider.
		a.Sandbox = sandbox.New(a.Logger)
		a.closers = append(a.closers, a.Sandbox)
		a.Config.OpenAIBaseURL = a.BaseURL() + sandboxPrefix
		a.Config.OpenAIAPIKey = sandbox.APIKey
		a.Logger.Warn("sandbox provider on: OpenAI-kind agents talk to a pretend provider", "url", a.Config.OpenAIBaseURL)
	}
	if err := a.mount(ctx); err != nil {
		return err
	}
	a.handler = a.serveMux()
	return nil
}

// telephony builds the phone channel's handler and keeps its carrier
// client in a.carrier; without a carrier account the routes that need the
// carrier answer 503.
func (a *App) telephony() (*telephony.Handler, error) {
	var carrier phonecarrier.Carrier
	token := a.Config.TwilioAuthToken
	if a.Config.TwilioAccountSID != "" && a.Config.TwilioAuthToken != "" {
		t, err := phonecarrier.NewTwilio(phonecarrier.TwilioConfig{
			AccountSID: a.Config.TwilioAccountSID, AuthToken: a.Config.TwilioAuthToken, BaseURL: a.Config.TwilioAPIBaseURL,
			Timeout: a.Config.TwilioTimeout,
		})
		if err != nil {
			return nil, err
		}
		carrier = t
	} else if a.usesSandboxCarrier() {
		// With no carrier account, the sandbox sells pretend numbers from an
		// in-process fake Twilio (sandboxphone.go). With the phone channel
		// off nothing could use it, and announcing it would mislead.
		t, err := a.sandboxCarrier(&token)
		if err != nil {
			return nil, err
		}
		carrier = t
	}
	a.carrier = carrier
	return telephony.New(telephony.Options{
		Enabled: a.Config.TelephonyEnabled, Store: a.Store, Auth: a.Auth, Carrier: carrier,
		Secret: a.Secret, BotHost: a.Config.BotHost,
		Signatures:         a.carrierSignatures(token),
		MaxConcurrentCalls: int(a.Config.MaxConcurrentCalls),
		Tools:              a.Tools, OpenAIBaseURL: a.Config.OpenAIBaseURL, OpenAIAPIKey: a.Config.OpenAIAPIKey,
		MaxCallDuration: a.Config.MaxCallDuration, ModelReadyTimeout: a.Config.ModelReadyTimeout, Registerer: a.Registry, Logger: a.Logger,
		Recordings: a.callRecordings(),
	}), nil
}

// usesSandboxCarrier says the phone channel buys its numbers from the
// sandbox's pretend Twilio: the sandbox and telephony are on, and no
// carrier account is configured. With the phone channel off nothing could
// use it.
func (a *App) usesSandboxCarrier() bool {
	return a.Config.Sandbox && a.Config.TelephonyEnabled && (a.Config.TwilioAccountSID == "" || a.Config.TwilioAuthToken == "")
}

// carrierSignatures checks the carrier's requests with token in every
// environment, and says at start when they are not checked at all or when,
// with no token, every one of them will be refused.
func (a *App) carrierSignatures(token string) *phonecarrier.Signatures {
	switch {
	case a.Config.SkipCarrierSigs:
		a.Logger.Warn("carrier signatures are NOT checked (AGENTLINE_SKIP_CARRIER_SIGNATURES=true): anyone who can reach this service can open calls to the model")
	case token == "" && a.Config.TelephonyEnabled:
		a.Logger.Warn("TWILIO_AUTH_TOKEN is not set: every carrier webhook and media stream is refused (403)")
	}
	return phonecarrier.NewSignatures(token, a.Config.BotHost, a.Config.SkipCarrierSigs)
}

// closeFunc makes a func() an io.Closer.
type closeFunc func()

func (f closeFunc) Close() error { f(); return nil }

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
	a.Logger.Info("created the first account, an instance administrator", "email", u.Email, "user_id", u.ID, "admin", u.Admin)
	if generated {
		fmt.Fprintf(stdout, "\nagentline: created the first account (shown once, keep it):\n  email:    %s\n  password: %s\n  sign in:  %s/\n\n",
			u.Email, password, a.BaseURL())
	}
	return nil
}

// BaseURL is AGENTLINE_PUBLIC_URL, or a local URL built from the listen
// address.
func (a *App) BaseURL() string {
	if a.Config.PublicURL != "" {
		return strings.TrimSuffix(a.Config.PublicURL, "/")
	}
	host, port, err := net.SplitHostPort(a.Config.Addr)
	if err != nil {
		return "http://localhost:8080"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Serve serves on ln, and /metrics on metrics unless it is nil, until ctx
// ends, then shuts down gracefully. First it drains: /readyz answers 503 at
// once, new phone calls and widget sessions are refused, and the calls live
// here go on until they end or the drain timeout passes. Then it stops
// accepting, lets requests in flight finish within the shutdown timeout,
// ends the calls still live, and returns.
func (a *App) Serve(ctx context.Context, ln, metrics net.Listener) error {
	// No ReadTimeout: the edge gives request bodies (and only them, never a
	// WebSocket upgrade) AGENTLINE_BODY_READ_TIMEOUT.
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(a.Logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	// Run returns only once the sweeper it started has stopped too, so that
	// Close never pulls the database from under it.
	sweepCtx, stopSweep := context.WithCancel(ctx)
	var sweeping sync.WaitGroup
	sweeping.Go(func() { a.sweep(sweepCtx) })
	defer func() { stopSweep(); sweeping.Wait() }()
	if metrics != nil {
		defer a.serveMetrics(metrics)()
	}
	if err := a.jobs.Start(ctx); err != nil {
		return err
	}
	defer a.stopJobs()
	if a.reconciler.Carrier != nil {
		// The calls live when an instance died are asked about at the next
		// start, whichever instance runs the job.
		if err := a.jobs.Enqueue(ctx, agentline.ReconcileCalls{All: true}); err != nil {
			a.Logger.Warn("could not enqueue the reconciliation of live calls", "err", err)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	a.Logger.Info("listening", "addr", ln.Addr().String(), "database", string(a.Store.Dialect()), "url", a.BaseURL())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.drain()
	a.Logger.Info("shutting down", "timeout", a.Config.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), a.Config.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	// Shutdown does not wait for hijacked connections: end the calls
	// relayed here and wait for their records.
	if err := a.phone.EndCalls(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// drain refuses new work and waits, up to the drain timeout, for the calls
// live here to end. Deliveries need no wait: they are durable jobs, which
// another instance (or this one, restarted) runs. The listener stays open meanwhile: requests of sessions and calls
// already running are still served.
func (a *App) drain() {
	a.draining.Store(true)
	a.widget.Drain()
	a.phone.Drain()
	a.Logger.Info("draining", "live_calls", a.phone.LiveCalls(), "timeout", a.Config.DrainTimeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), a.Config.DrainTimeout)
	defer cancel()
	if err := a.phone.WaitCalls(ctx); err != nil {
		a.Logger.Warn("drain timeout: ending the calls still live", "err", err)
		return
	}
	a.Logger.Info("drained")
}

// sweep removes expired sign-ins and the uses of expired stream tokens
// every hour.
func (a *App) sweep(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := a.Store.DeleteExpiredAuthSessions(ctx); err != nil && ctx.Err() == nil {
			a.Logger.Warn("sweep expired sessions", "err", err)
		} else if n > 0 {
			a.Logger.Info("swept expired sessions", "count", n)
		}
		if n, err := a.Store.DeleteExpiredStreamTokens(ctx); err != nil && ctx.Err() == nil {
			a.Logger.Warn("sweep used stream tokens", "err", err)
		} else if n > 0 {
			a.Logger.Info("swept used stream tokens", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close releases what New opened: the widget handler's writes of key uses
// (given up to the shutdown timeout), the sandbox provider and fake carrier
// (in sandbox mode), any connection to Redis, and the database, last, once
// nothing of ours can write to it.
func (a *App) Close() error {
	var errs []error
	if a.widget != nil {
		ctx, cancel := context.WithTimeout(context.Background(), a.Config.ShutdownTimeout)
		if err := a.widget.Shutdown(ctx); err != nil {
			a.Logger.Warn("close", "err", err)
		}
		cancel()
	}
	for _, c := range a.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(append(errs, a.Store.Close())...)
}

// rateLimiter counts widget requests in Redis when AGENTLINE_REDIS_URL is
// set, so that every instance shares the limits (per instance, in memory,
// while Redis does not answer), and in memory otherwise.
func (a *App) rateLimiter(ctx context.Context) (ratelimit.Limiter, error) {
	if a.Config.RedisURL == "" {
		return ratelimit.NewMemory(), nil
	}
	r, err := ratelimit.NewRedis(ctx, a.Config.RedisURL, ratelimit.RedisOptions{Logger: a.Logger, Registerer: a.Registry})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, r)
	return r, nil
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
