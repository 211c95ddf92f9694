package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/agentline/agentline/internal/httpx"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// startTracing builds the tracer provider when tracing is on
// (config.Tracing: an OTLP endpoint is set): an OTLP/HTTP exporter that
// reads the standard OTEL_* variables itself, behind a batch processor,
// with the sampler OTEL_TRACES_SAMPLER names. Its shutdown, which flushes
// the spans still queued, is one of the app's closers. When off it returns
// nil: every package then leaves its tracing out, rather than calling a
// no-op tracer on its paths. The OpenTelemetry globals are left alone.
func (a *App) startTracing(ctx context.Context) (trace.TracerProvider, error) {
	if !a.Config.Tracing {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default
	// name: later detectors override earlier ones.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "agentline")),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	a.closers = append(a.closers, closeFunc(func() {
		if err := tp.Shutdown(context.WithoutCancel(ctx)); err != nil {
			a.logger.Warn("tracing: flush on shutdown", "err", err)
		}
	}))
	a.logger.Info("tracing on: exporting spans over OTLP/HTTP")
	return tp, nil
}

// providerHTTP is the client of requests to the deployment's providers
// with a span per request when tracing is on; nil (the package's own
// default client) when it is off.
func (a *App) providerHTTP(timeout time.Duration) *http.Client {
	if a.tracing == nil {
		return nil
	}
	return httpx.TracedClient(&http.Client{Timeout: timeout}, a.tracing)
}
