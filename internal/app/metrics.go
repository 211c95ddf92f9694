package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Run listens on AGENTLINE_METRICS_ADDR (unless it is off) and serves as
// Serve does. A metrics address that cannot be bound stops the start, so
// that a collision is noticed instead of silently losing the metrics.
func (a *App) Run(ctx context.Context, ln net.Listener) error {
	var metrics net.Listener
	if a.Config.MetricsEnabled() {
		m, err := net.Listen("tcp", a.Config.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener (AGENTLINE_METRICS_ADDR): %w", err)
		}
		metrics = m
	}
	return a.Serve(ctx, ln, metrics)
}

// MetricsHandler serves the Prometheus text at GET /metrics. It is not part
// of Handler: route names, call counts and the runtime's figures are for
// operators, so they live on their own, by default loopback-only, listener.
func (a *App) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{}))
	return mux
}

// serveMetrics serves MetricsHandler on ln until the returned stop is
// called; stop closes ln and waits for the server to return.
func (a *App) serveMetrics(ln net.Listener) (stop func()) {
	srv := &http.Server{
		Handler:           a.MetricsHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("metrics listener stopped", "err", err)
		}
	}()
	a.logger.Info("metrics listening", "addr", ln.Addr().String())
	return func() {
		srv.Close()
		<-done
	}
}
