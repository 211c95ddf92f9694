package httpx

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
)

// traced puts an OpenTelemetry server span around h: one per request,
// named by method and route pattern once the mux has matched it (Wrap
// hands the pattern back). Prometheus keeps the metrics, so otelhttp's own
// go to a no-op meter.
func traced(h http.Handler, tp trace.TracerProvider) http.Handler {
	return otelhttp.NewHandler(h, "http",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if r.Pattern == "" {
				return r.Method
			}
			return r.Pattern
		}))
}

// TracedClient returns c with a client span per request when tp is set
// (tracing is on), and c itself otherwise: with tracing off a provider
// request costs nothing more. c's other settings are kept.
func TracedClient(c *http.Client, tp trace.TracerProvider) *http.Client {
	if tp == nil {
		return c
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out := *c
	out.Transport = otelhttp.NewTransport(base,
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))
	return &out
}

// TagConversation puts the conversation id on the request's span, when
// tracing is on, so that a conversation begun by a request (a widget
// session) is found by the same attribute as its calls and jobs.
func TagConversation(ctx context.Context, id string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String(agentline.ConversationIDAttribute, id))
	}
}
