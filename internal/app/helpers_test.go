package app_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/config"
)

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// newApp builds an App without serving it; it is closed when the test ends.
func newApp(t testing.TB, cfg config.Config) (*app.App, error) {
	t.Helper()
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err == nil {
		t.Cleanup(func() { a.Close() })
	}
	return a, err
}
