package app_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The Phone tab's "Place test call" in the sandbox (before, it never
// rang): the pretend carrier rings, a pretend callee answers and talks,
// and the status the tab shows goes on to in-progress and completed.
func TestConsoleSandboxTestCallRings(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "localhost",
	})
	tok, p, a := acmeWithAda(t, s)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/telephony/numbers", tok, map[string]any{"phone_number": "+14155550100", "agent_id": a.ID}, nil)
	c := newConsole(t, ctx, s.URL)
	c.open("#/agents/"+itoa(a.ID)+"/phone", 1000, 760)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Ada")
	c.fill("Place test call", "Number to call", "+14155550123")
	// Every status the tab shows, in order, from the first: watched from
	// before the press, since a status read after it may already be past
	// queued on a loaded machine.
	eval[any](t, ctx, `window.shown = [];
		new MutationObserver(() => { const e = document.getElementById("call-status"), s = e && e.textContent; if (s && shown.at(-1) !== s) shown.push(s); })
			.observe(document.body, {childList: true, characterData: true, subtree: true}); 0`)
	c.press("Place test call")
	c.poll("the call's status", `!!document.getElementById("call-status")`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[any](`document.getElementById("call-status").textContent.startsWith("completed")`,
		chromedp.WithPollingTimeout(40*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("the test call did not complete: shown %v, %v", eval[[]string](t, ctx, `shown`), err)
	}
	shown := eval[[]string](t, ctx, `shown`)
	t.Logf("statuses shown: %v", shown)
	if shown[0] != "queued" || !strings.Contains(strings.Join(shown, " "), "in-progress") {
		t.Errorf("statuses shown %v: want queued, then (ringing,) in-progress, then completed", shown)
	}
	if dir := os.Getenv("AGENTLINE_SHOTS_DIR"); dir != "" {
		c.shot(dir, "console-sandbox-test-call.png")
	}
	c.noErrors("the sandbox test call")
}
