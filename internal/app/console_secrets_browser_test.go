package app_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// redrawn marks the page's forms stale, runs act, and waits until the page
// has been drawn anew (its forms replaced).
func (c console) redrawn(what string, act func()) {
	c.t.Helper()
	eval[any](c.t, c.ctx, `document.querySelectorAll("main form").forEach((f) => (f.dataset.stale = "1"))`)
	act()
	c.poll(what, `!!document.querySelector("main form") && !document.querySelector("main form[data-stale]")`)
}

// Secrets shown once stay on screen until the user dismisses them (issue
// 27): a webhook's signing secret survives "Send test event", which draws
// the page anew; a channel's new key survives leaving the page and coming
// back; an invitation link survives the same. Dismiss removes each.
func TestConsoleSecretsStayUntilDismissed(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	recv := &hookReceiver{status: 204}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	var ch agentline.Channel
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "voice_widget", "name": "Site", "agent_id": a.ID}, &ch)
	c := newConsole(t, ctx, s.URL)
	shots := shotDir(t)

	// The webhook's secret, through a test event and the redraw after it.
	c.open("#/webhooks", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Webhooks")
	c.fill("New endpoint", "URL", srv.URL+"/hooks")
	c.fill("New endpoint", "Description", "CRM sync")
	c.press("Add endpoint")
	c.heading("CRM sync")
	secret := c.text("#whole-secret")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the secret on screen: %q", secret)
	}
	c.redrawn("the page after the test event", func() { c.press("Send test event") })
	if got := c.text("#whole-secret"); got != secret {
		t.Errorf("after Send test event the secret on screen is %q, want the one shown at first", got)
	}
	c.shot(shots, "secret-after-test-event.png")
	c.press("Dismiss")
	c.poll("the secret gone", `!document.getElementById("whole-secret") && document.getElementById("secret").textContent.includes("shown once")`)

	// The channel's key, through leaving the page and coming back.
	c.open("#/channels/"+itoa(ch.ID), 1000, 900)
	c.heading("Site")
	c.press("Generate key")
	c.poll("the whole key", `!!document.getElementById("whole-key")`)
	key := c.text("#whole-key")
	c.press("Channels")
	c.heading("Channels")
	c.press("Site")
	c.heading("Site")
	c.poll("the key card", `!!document.getElementById("key")`)
	if got := c.text("#whole-key"); got != key {
		t.Errorf("back on the channel the whole key on screen is %q, want %q", got, key)
	}
	if sn := c.text("#snippet-script"); !strings.Contains(sn, key) {
		t.Errorf("the snippet lost the key while it is shown: %s", sn)
	}
	c.shot(shots, "key-after-coming-back.png")
	c.press("Dismiss")
	c.poll("only the prefix", `!document.getElementById("whole-key") && !!document.getElementById("key-prefix")`)

	// An invitation link, through the same.
	c.press("Members")
	c.heading("Members of Acme")
	c.fill("Invite", "Email to invite", "grace@example.com")
	c.press("Invite")
	c.poll("the link", `!!document.getElementById("invite-link")`)
	link := c.text("#invite-link")
	c.press("Agents")
	c.heading("Agents")
	c.press("Members")
	c.heading("Members of Acme")
	if got := c.text("#invite-link"); got != link {
		t.Errorf("back on Members the link on screen is %q, want %q", got, link)
	}
	c.press("Dismiss")
	c.poll("the link gone", `!document.getElementById("invite-link")`)
	c.noErrors("secrets")
}
