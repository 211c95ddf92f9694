package httpx

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
)

// tracerName is the instrumentation scope of the edge's request spans.
const tracerName = "github.com/agentline/agentline/internal/httpx"

// startServerSpan opens the server span of one request, named by method
// until the mux has matched a route. The edge makes it itself rather than
// through otelhttp's handler: that one wraps the response writer and body
// again (the edge's statusRecorder already counts both) and builds a
// metric attribute set per request even for a no-op meter, which together
// made a traced request allocate several times what its span does.
// Attribute names are the HTTP semantic conventions otelhttp uses.
func startServerSpan(ctx context.Context, tracer trace.Tracer, r *http.Request) (context.Context, trace.Span) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	peer, _, _ := net.SplitHostPort(r.RemoteAddr)
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, ""
	}
	attrs := [...]attribute.KeyValue{
		attribute.String("http.request.method", r.Method),
		attribute.String("url.scheme", scheme),
		attribute.String("url.path", r.URL.Path),
		attribute.String("server.address", host),
		attribute.String("network.peer.address", peer),
		attribute.String("user_agent.original", r.UserAgent()),
		{},
	}
	n := len(attrs) - 1
	if p, err := strconv.Atoi(port); err == nil {
		attrs[n] = attribute.Int("server.port", p)
		n++
	}
	return tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs[:n]...))
}

// endServerSpan names the span by the route the mux matched and records
// the answer; 5xx answers are errors, 4xx the client's (as otelhttp does).
func endServerSpan(span trace.Span, r *http.Request, rec *statusRecorder) {
	if span.IsRecording() {
		if r.Pattern != "" {
			span.SetName(r.Pattern)
		}
		attrs := [...]attribute.KeyValue{
			attribute.String("http.route", route(r.Pattern)),
			attribute.Int("http.response.status_code", rec.status),
			attribute.Int64("http.response.body.size", rec.bytes),
			{},
		}
		n := len(attrs) - 1
		if client := clientLabel(r); client != "" {
			attrs[n] = attribute.String("client.address", client)
			n++
		}
		span.SetAttributes(attrs[:n]...)
		if rec.status >= 500 {
			span.SetStatus(codes.Error, "")
		}
	}
	span.End()
}

// route is a mux pattern without its method ("GET /a/{id}" is "/a/{id}"),
// as the semantic conventions' http.route is.
func route(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
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
