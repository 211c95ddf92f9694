package httpx

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// BenchmarkTracingAllocs is what tracing allocates, split by where: one
// request through the edge with tracing off, the same with a server span
// exported over OTLP/HTTP to a receiver on loopback (the SDK's batcher, made to block rather than
// drop so that every span's export is counted), and a bare span with three
// attributes, started, ended and exported. The export runs in the
// batcher's goroutine; the counts are the whole process's, so it is in.
//
//	go test -run '^$' -bench TracingAllocs -benchmem ./internal/httpx/
func BenchmarkTracingAllocs(b *testing.B) {
	// A receiver that reads and drops each export: otlptest's decoding
	// would count among the allocations measured.
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	defer recv.Close()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(strings.TrimPrefix(recv.URL, "http://")), otlptracehttp.WithInsecure())
	if err != nil {
		b.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBlocking()))
	defer tp.Shutdown(ctx)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/telephony/voice", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	request := func(b *testing.B, tp trace.TracerProvider) {
		e := NewEdge(slog.New(slog.DiscardHandler), 1<<20, prometheus.NewRegistry())
		e.TracerProvider = tp
		h := e.Wrap(mux)
		for b.Loop() {
			r := httptest.NewRequest("POST", "/api/telephony/voice", strings.NewReader("CallSid=CA1&From=%2B14155550100"))
			r.Header.Set("User-Agent", "TwilioProxy/1.1")
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
	}
	b.Run("request-off", func(b *testing.B) { b.ReportAllocs(); request(b, nil) })
	b.Run("request-on", func(b *testing.B) { b.ReportAllocs(); request(b, tp) })
	b.Run("span", func(b *testing.B) {
		b.ReportAllocs()
		tracer := tp.Tracer("bench")
		for b.Loop() {
			_, span := tracer.Start(ctx, "turn", trace.WithAttributes(attribute.Int("agentline.turn", 3),
				attribute.String("agentline.conversation_id", "call_123"), attribute.String("agentline.call.sid", "CA0123456789abcdef")))
			span.End()
		}
	})
	tp.ForceFlush(ctx)
}
