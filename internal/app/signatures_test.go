package app_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Skipping carrier signatures is said at start as a warning, so that a
// server left that way is noticed in its log; with the carrier token set
// and nothing skipped, nothing is said.
func TestSkipCarrierSignaturesWarnsAtStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		skip string
		warn bool
	}{{"true", true}, {"false", false}} {
		t.Run("skip="+tc.skip, func(t *testing.T) {
			cfg := apptest.Config(t, storetest.URL(t, store.SQLite), map[string]string{
				"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "TWILIO_AUTH_TOKEN": carrierToken,
				"AGENTLINE_SKIP_CARRIER_SIGNATURES": tc.skip,
			})
			var log bytes.Buffer
			a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(&log, nil)), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			warned := strings.Contains(log.String(), "level=WARN") && strings.Contains(log.String(), "carrier signatures are NOT checked")
			if warned != tc.warn {
				t.Fatalf("warned %t, want %t; log:\n%s", warned, tc.warn, log.String())
			}
		})
	}
}

// The sandbox's pretend carrier is announced only when the phone channel
// is on: with telephony off no number can be bought, so saying so would
// mislead (`make run` has telephony off).
func TestSandboxCarrierSaidOnlyWithTelephony(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		said bool
	}{
		{map[string]string{"AGENTLINE_SANDBOX": "true"}, false},
		{map[string]string{"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test"}, true},
	} {
		t.Run("telephony="+tc.env["TELEPHONY_ENABLED"], func(t *testing.T) {
			cfg := apptest.Config(t, storetest.URL(t, store.SQLite), tc.env)
			var log bytes.Buffer
			a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(&log, nil)), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if said := strings.Contains(log.String(), "sandbox carrier on"); said != tc.said {
				t.Fatalf("said %t, want %t; log:\n%s", said, tc.said, log.String())
			}
		})
	}
}
