package httpx

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// With no tracer provider the edge adds no span (no otelhttp in the
// chain); with one, each request gets a server span named by its route,
// the pattern the mux matched behind the edge.
func TestEdgeTracesOnlyWhenOn(t *testing.T) {
	for _, on := range []bool{false, true} {
		rec := tracetest.NewSpanRecorder()
		e := NewEdge(slog.New(slog.DiscardHandler), 1<<20, prometheus.NewRegistry())
		if on {
			e.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		}
		var inSpan bool
		mux := http.NewServeMux()
		mux.HandleFunc("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) {
			inSpan = trace.SpanContextFromContext(r.Context()).IsValid()
		})
		e.Wrap(mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/things/7", nil))
		if inSpan != on {
			t.Errorf("tracing %v: handler in a span = %v", on, inSpan)
		}
		ended := rec.Ended()
		if !on && len(ended) != 0 || on && (len(ended) != 1 || ended[0].Name() != "GET /things/{id}") {
			t.Errorf("tracing %v: spans %v", on, ended)
		}
		if on && len(ended) == 1 {
			// The semantic-convention attributes otelhttp's handler gave.
			got := map[string]string{}
			for _, kv := range ended[0].Attributes() {
				got[string(kv.Key)] = kv.Value.String()
			}
			want := map[string]string{"http.request.method": "GET", "url.path": "/things/7", "http.route": "/things/{id}",
				"http.response.status_code": "200", "server.address": "example.com", "url.scheme": "http"}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("span attribute %s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			if ended[0].SpanKind() != trace.SpanKindServer {
				t.Errorf("span kind %v, want server", ended[0].SpanKind())
			}
		}
	}
}
