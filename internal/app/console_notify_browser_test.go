package app_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// A form's notify_url deliveries are shown on its channel's page the way
// event webhook deliveries are: one row per lead with its
// state, the answer's status, and each attempt when opened; one receiver
// that fails every attempt shows "failed". axe-core finds nothing serious.
func TestConsoleNotifyDeliveries(t *testing.T) {
	t.Parallel()
	source := axeSource(t)
	ctx := newBrowser(t)
	down := &hookReceiver{status: 500}
	srv := httptest.NewServer(down)
	defer srv.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
		// Two quick attempts per lead, so that a failing one gives up soon.
		"AGENTLINE_NOTIFY_BACKOFF": "100ms"})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var ch agentline.Channel
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "form", "name": "Contact form",
		"settings": map[string]any{"form": map[string]any{"notify_url": srv.URL + "/leads?token=abc"}}}, &ch)
	var lead struct {
		LeadID int64 `json:"lead_id"`
	}
	s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(ch.ID), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, &lead)
	type attempts struct {
		Attempts []agentline.NotifyAttempt `json:"attempts"`
	}
	untilAPI(t, s, tok, "/api/channels/"+itoa(ch.ID)+"/notify-attempts", "both attempts", func(a attempts) bool { return len(a.Attempts) == 2 })

	c := newConsole(t, ctx, s.URL)
	c.open("#/channels/"+itoa(ch.ID), 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Contact form")
	row := `document.querySelector("#notify-deliveries tr[data-lead='` + itoa(lead.LeadID) + `']")`
	c.poll("the lead's delivery", `!!`+row)
	if got := eval[string](t, ctx, row+`.innerText.replace(/\s+/g, " ")`); !strings.Contains(got, "Lead "+itoa(lead.LeadID)) ||
		!strings.Contains(got, "failed") || !strings.Contains(got, "(500)") || !strings.Contains(got, "2 attempts") {
		t.Errorf("the delivery's row: %q", got)
	}
	if n := c.text("#notify-deliveries .notice"); !strings.Contains(n, "could not be delivered") {
		t.Errorf("no notice of the failure: %q", n)
	}
	eval[any](t, ctx, row+`.querySelector("summary").click()`)
	c.poll("the attempts", row+`.querySelectorAll("ol.attempts li").length === 2`)
	if got := eval[string](t, ctx, row+`.querySelector("ol.attempts").innerText`); !strings.Contains(got, "HTTP 500") || !strings.Contains(got, "the receiver answered 500") {
		t.Errorf("the attempts: %q", got)
	}
	// The URL's token is in the Notify URL field's value, never in text.
	if strings.Contains(c.text("main"), "token=abc") {
		t.Error("the notify URL's token shows on the page")
	}
	c.accessible("form channel")
	c.axeCheck(source, "#/channels/"+itoa(ch.ID))
	c.shot(shotDir(t), "notify-deliveries.png")
	c.noErrors("notify deliveries")
}
