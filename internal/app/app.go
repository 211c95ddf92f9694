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
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/provider/sandbox"
	"github.com/agentline/agentline/internal/secretbox"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
	"github.com/agentline/agentline/internal/tools"
)

// App is one running agentline. Its exported fields are what commands and
// tests outside the package use; the rest of the graph build makes is
// private.
type App struct {
	Config config.Config
	Store  *store.DB
	Auth   *auth.Service
	// Sandbox is the pretend OpenAI-compatible provider of --sandbox; nil
	// otherwise.
	Sandbox *sandbox.Server
	// Tools runs agents' tool calls for widget sessions and phone calls.
	Tools *tools.Facility
	// Secret signs stream tokens: AGENTLINE_SECRET, or the one generated and
	// stored on first start.
	Secret string
	// Secrets seals the secrets projects store (provider keys) under
	// AGENTLINE_ENCRYPTION_KEY; nil in production without one.
	Secrets *secretbox.Box

	logger   *slog.Logger
	registry *prometheus.Registry
	// handlers are every package's HTTP handlers: build makes them, mount
	// lists their routes, and the life cycle drains phone and widget.
	handlers
	routes []httpx.Route
	// mux serves the routes without the edge: the MCP server's tool calls
	// go through it, inside a request that passed the edge already.
	mux     http.Handler
	handler http.Handler
	// closers are closed by Close, in order, before the database.
	closers []io.Closer
	// jobs runs durable jobs (webhook and notify_url deliveries, sweeps)
	// while Run serves.
	jobs *jobs.Queue
	// reconciler asks the carrier about calls left live (ReconcileCalls).
	reconciler *telephony.Reconciler
	// draining is set on shutdown, before the drain: /readyz answers 503.
	draining atomic.Bool
	// sandboxPhone is the sandbox's pretend Twilio, when it is the carrier
	// (tests read its log of calls).
	sandboxPhone *twiliofake.Fake
	// tracing makes the spans of requests, calls, jobs and provider
	// requests; nil when tracing is off (tracing.go).
	tracing trace.TracerProvider
}

// New opens and migrates the database, makes sure a secret and an owner
// account exist (printing a generated password once on stdout), builds the
// whole object graph (build), then lists every route (mount). The
// sandbox's settings are applied to cfg first (config.ApplySandbox, which
// config.Load applied already; again here, since a caller may have changed
// the listen address since).
func New(ctx context.Context, cfg config.Config, logger *slog.Logger, stdout io.Writer) (*App, error) {
	cfg.ApplySandbox()
	sender, err := mailSender(cfg)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	a := &App{Config: cfg, logger: logger, Store: db, registry: prometheus.NewRegistry()}
	if err := a.build(ctx, sender, stdout); err != nil {
		a.Close()
		return nil, err
	}
	a.routes = a.mount()
	a.handler = a.serveMux()
	return a, nil
}

// closeFunc makes a func() an io.Closer.
type closeFunc func()

func (f closeFunc) Close() error { f(); return nil }

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
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
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
			a.logger.Warn("could not enqueue the reconciliation of live calls", "err", err)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	a.logger.Info("listening", "addr", ln.Addr().String(), "database", string(a.Store.Dialect()), "url", a.Config.BaseURL())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.drain()
	a.logger.Info("shutting down", "timeout", a.Config.ShutdownTimeout.String())
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
	a.logger.Info("draining", "live_calls", a.phone.LiveCalls(), "timeout", a.Config.DrainTimeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), a.Config.DrainTimeout)
	defer cancel()
	if err := a.phone.WaitCalls(ctx); err != nil {
		a.logger.Warn("drain timeout: ending the calls still live", "err", err)
		return
	}
	a.logger.Info("drained")
}

// sweep removes expired sign-ins and the uses of expired stream tokens
// every hour.
func (a *App) sweep(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := a.Store.DeleteExpiredAuthSessions(ctx); err != nil && ctx.Err() == nil {
			a.logger.Warn("sweep expired sessions", "err", err)
		} else if n > 0 {
			a.logger.Info("swept expired sessions", "count", n)
		}
		if n, err := a.Store.DeleteExpiredStreamTokens(ctx); err != nil && ctx.Err() == nil {
			a.logger.Warn("sweep used stream tokens", "err", err)
		} else if n > 0 {
			a.logger.Info("swept used stream tokens", "count", n)
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
			a.logger.Warn("close", "err", err)
		}
		cancel()
	}
	for _, c := range a.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(append(errs, a.Store.Close())...)
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
