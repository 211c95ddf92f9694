package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// BenchmarkHealthz is the baseline cost of the HTTP edge (request id,
// logger, body limit, recovery, access log, metrics, routing): GET /healthz
// through the whole app against a bare hello-world handler, in process and
// over loopback with keep-alive. Figures: docs/benchmarks.md.
func BenchmarkHealthz(b *testing.B) {
	// The app logs every request as JSON at info level, as in production,
	// to io.Discard: the benchmark counts formatting the log, not disk I/O.
	cfg := apptest.Config(b, storetest.URL(b, store.SQLite), nil)
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, ln) }()
	b.Cleanup(func() { cancel(); <-done })

	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	bareServer := httptest.NewServer(bare)
	b.Cleanup(bareServer.Close)

	inProcess := func(h http.Handler) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			req := httptest.NewRequest("GET", "/healthz", nil)
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d", rec.Code)
				}
			}
		}
	}
	loopback := func(url string) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.Cleanup(client.CloseIdleConnections)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := client.Get(url + "/healthz")
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
		}
	}
	b.Run("in-process/bare", inProcess(bare))
	b.Run("in-process/agentline", inProcess(a.Handler()))
	b.Run("loopback/bare", loopback(bareServer.URL))
	b.Run("loopback/agentline", loopback("http://"+ln.Addr().String()))
}
