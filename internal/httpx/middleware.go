package httpx

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
)

// Edge is the middleware chain in front of every route.
type Edge struct {
	Logger       *slog.Logger
	MaxBodyBytes int64
	// TrustedProxies are the peers whose X-Forwarded-For or Forwarded
	// header names the client (AGENTLINE_TRUSTED_PROXIES); from any other
	// peer those headers are ignored.
	TrustedProxies []netip.Prefix
	// BodyReadTimeout is how long a request body may take to arrive
	// (AGENTLINE_BODY_READ_TIMEOUT); 0 means no limit.
	BodyReadTimeout time.Duration
	// TracerProvider, when set (tracing is on), gets a span per request;
	// nil leaves the chain as it is, with no tracing code on the path.
	TracerProvider trace.TracerProvider
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
}

// NewEdge registers the HTTP metrics on reg.
func NewEdge(logger *slog.Logger, maxBodyBytes int64, reg prometheus.Registerer) *Edge {
	e := &Edge{
		Logger:       logger,
		MaxBodyBytes: maxBodyBytes,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentline_http_requests_total",
			Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentline_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
	}
	reg.MustRegister(e.requests, e.latency)
	return e
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Wrap puts the middleware around next: request id, nosniff, per-request
// logger, client address, body size and read time limits (a POST, PUT or
// PATCH declaring a length over the size limit is a 413 at once), panic
// recovery, access log and metrics; with tracing on, a span around it all.
func (e *Edge) Wrap(next http.Handler) http.Handler {
	var tracer trace.Tracer
	if e.TracerProvider != nil {
		tracer = e.TracerProvider.Tracer(tracerName)
	}
	return e.wrap(next, tracer)
}

func (e *Edge) wrap(next http.Handler, tracer trace.Tracer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		id := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(id) {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		// No answer is ever to be read as another type than it says: a JSON
		// error or a lead's text must not turn into a script or a page.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		logger := e.Logger.With("request_id", id)
		ctx := context.WithValue(WithLogger(r.Context(), logger), requestIDKey{}, id)
		if client, ok := resolveClient(r, e.TrustedProxies); ok {
			ctx = context.WithValue(ctx, clientIPKey{}, client)
		}
		if tracer != nil {
			var span trace.Span
			ctx, span = startServerSpan(ctx, tracer, r)
			defer func() { endServerSpan(span, r, rec) }()
		}
		r = r.WithContext(ctx)
		e.limitBody(w, r)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger.Error("panic", "panic", p, "path", r.URL.Path)
				if !rec.wrote {
					WriteError(rec, r, agentline.Errorf(agentline.EInternal, "internal error"))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			elapsed := time.Since(start)
			e.requests.WithLabelValues(route, methodLabel(r.Method), strconv.Itoa(rec.status)).Inc()
			e.latency.WithLabelValues(route).Observe(elapsed.Seconds())
			logger.LogAttrs(r.Context(), slog.LevelInfo, "http",
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("route", route),
				slog.Int("status", rec.status), slog.Int64("bytes", rec.bytes), slog.Duration("duration", elapsed),
				slog.String("remote", r.RemoteAddr), slog.String("client", clientLabel(r)))
		}()
		if r.ContentLength > e.MaxBodyBytes && carriesBody(r.Method) {
			// Refused before a byte is read: a handler that fails on the
			// first bytes would answer 400 to what is really too large.
			WriteError(rec, r, &http.MaxBytesError{Limit: e.MaxBodyBytes})
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// clientLabel is the resolved client address for the access log: behind a
// proxy, "remote" is only the proxy.
func clientLabel(r *http.Request) string {
	if a, ok := ClientAddr(r.Context()); ok {
		return a.String()
	}
	return ""
}

// carriesBody reports whether requests of method have a body by meaning.
// Other methods' handlers never read one, so a body sent along is left
// unread (and capped) instead of turning, say, an HTML page's own error
// answer into a JSON 413.
func carriesBody(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// methodLabel keeps the metrics' method label to the standard methods, so
// that clients inventing methods cannot grow the number of series.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// statusRecorder remembers the status and size of an answer. It passes
// Flush and Hijack through (Unwrap), so WebSocket upgrades still work.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush lets streaming handlers flush through the recorder.
func (s *statusRecorder) Flush() {
	s.wrote = true
	http.NewResponseController(s.ResponseWriter).Flush()
}

// Hijack lets WebSocket libraries take over the connection; the status is
// recorded as 101.
func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err == nil {
		s.status, s.wrote = http.StatusSwitchingProtocols, true
	}
	return c, rw, err
}
