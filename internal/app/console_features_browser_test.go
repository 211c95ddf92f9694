package app_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// The deployment's features are read again when they may have changed
// (before, after a restart with telephony on, the Phone tab stayed
// missing until a full reload): the console is open on an agent while the
// server runs with telephony off; the server restarts, same database and
// address, with telephony on; the Phone tab appears without a reload.
func TestConsoleRereadsFeaturesAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	db := storetest.URL(t, store.SQLite)
	s := apptest.Start(t, apptest.Config(t, db, nil))
	_, _, a := acmeWithAda(t, s)
	c := newConsole(t, ctx, s.URL)
	c.open("#/agents/"+itoa(a.ID), 1000, 700)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Ada")
	tabs := `[...document.querySelectorAll("nav.tabs a")].map(a => a.textContent).join(" ")`
	if got := eval[string](t, ctx, tabs); strings.Contains(got, "Phone") {
		t.Fatalf("telephony off, tabs: %s", got)
	}

	addr := strings.TrimPrefix(s.URL, "http://")
	s.Stop(t)
	time.Sleep(500 * time.Millisecond) // the console meets a server that is gone
	restarted := time.Now()
	apptest.StartAt(t, apptest.Config(t, db, map[string]string{"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test"}), addr)
	if _, err := chromedp.Run(ctx, chromedp.Poll[any](`(`+tabs+`).includes("Phone")`,
		chromedp.WithPollingTimeout(12*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("the Phone tab did not appear within 12 s of the restart with telephony on (no reload): tabs %q, %v", eval[string](t, ctx, tabs), err)
	}
	t.Logf("the Phone tab appeared %v after the restart", time.Since(restarted).Round(100*time.Millisecond))
	if got := eval[string](t, ctx, `location.hash + " " + document.querySelector("main h1").textContent`); got != "#/agents/"+itoa(a.ID)+" Ada" {
		t.Errorf("page after the restart: %q, want the same agent's page", got)
	}
	shots := os.Getenv("AGENTLINE_SHOTS_DIR") // to look at it
	if shots == "" {
		shots = t.TempDir()
	}
	c.shot(shots, "console-features-after-restart.png")
	c.noErrors("after the restart")
}
