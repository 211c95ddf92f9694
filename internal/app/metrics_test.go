package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A metrics address that is taken stops Run with an error naming the
// setting, instead of serving without metrics.
func TestMetricsAddrTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := apptest.Config(t, storetest.URL(t, store.SQLite), map[string]string{"AGENTLINE_METRICS_ADDR": taken.Addr().String()})
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // should it start after all, it stops at once
	if err := a.Run(ctx, ln); err == nil || !strings.Contains(err.Error(), "AGENTLINE_METRICS_ADDR") {
		t.Fatalf("Run with a taken metrics address = %v", err)
	}
}
