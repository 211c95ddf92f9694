package app_test

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// Controls that only owners can use (deletes, revoking a key) and those
// that need an editor (creating, saving, testing).
var (
	ownerControls = []string{"Delete agent", "Delete", "Delete channel", "Revoke key", "Delete endpoint", "Delete conversation", "Delete project", "Release number", "Hang up",
		"Delete campaign", "Remove +14155550199"}
	writerControls = []string{"Create agent", "Save", "Add tool", "Edit", "Upload", "Talk (microphone)", "Chat by text", "Create channel",
		"Save settings", "Save form", "Save limits", "Make a new key", "Generate key", "Add endpoint", "Save endpoint", "Rotate secret",
		"Send test event", "Retry", "Save project", "Add field", "Add parameter", "Edit as JSON",
		"Create campaign", "Start", "Cancel campaign", "Upload contacts", "Add number"}
)

// The console shows each role only what it can do: an editor
// sees no delete or revoke button on any page, a viewer also no create,
// save or test control, and the forms a viewer reads are disabled. The
// owner sees them all.
func TestConsoleShowsOnlyWhatTheRoleCan(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	hooks := httptest.NewServer(&hookReceiver{status: 204})
	defer hooks.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	_, owner := s.NewUser(t, "owner@example.com")
	_, editor := s.NewUser(t, "editor@example.com")
	_, viewer := s.NewUser(t, "viewer@example.com")
	var p agentline.Project
	var a agentline.Agent
	var widget, chat agentline.Channel
	var hook agentline.WebhookEndpoint
	s.Must(t, 201, "POST", "/api/projects", owner, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", owner, map[string]string{"name": "Ada"}, &a)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", owner, map[string]any{"name": "lookup_order", "description": "Find an order",
		"url": hooks.URL + "/tool", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", owner, map[string]any{"type": "voice_widget", "name": "Site", "agent_id": a.ID}, &widget)
	s.Must(t, 201, "POST", "/api/channels/"+itoa(widget.ID)+"/key", owner, map[string]any{}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", owner, map[string]any{"type": "form", "name": "Chat with us", "agent_id": a.ID,
		"settings": map[string]any{"form": map[string]any{"mode": "live_chat"}}}, &chat)
	var lead struct {
		SessionID string `json:"session_id"`
	}
	s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(chat.ID), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, &lead)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", owner, map[string]any{"url": hooks.URL + "/hooks", "description": "CRM"}, &hook)
	var camp struct {
		ID int64 `json:"id"`
	}
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/campaigns", owner, map[string]any{"name": "Renewals", "agent_id": a.ID}, &camp)
	s.Must(t, 200, "POST", "/api/campaigns/"+itoa(camp.ID)+"/contacts", owner, []map[string]string{{"phone_number": "+14155550101"}}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/dnc", owner, map[string]string{"phone_number": "+14155550199"}, nil)
	s.Join(t, owner, p.ID, editor, "editor@example.com", agentline.RoleEditor)
	s.Join(t, owner, p.ID, viewer, "viewer@example.com", agentline.RoleViewer)

	pages := []struct{ hash, heading, ready string }{
		{"#/agents", "Agents", ""},
		{"#/agents/" + itoa(a.ID) + "/settings", "Ada", "form[aria-label='Agent settings']"},
		{"#/agents/" + itoa(a.ID) + "/test", "Ada", ".test-panel"},
		{"#/agents/" + itoa(a.ID) + "/tools", "Ada", "main td.wrap"},
		{"#/agents/" + itoa(a.ID) + "/knowledge", "Ada", "form[aria-label='Search']"},
		{"#/channels", "Channels", ""},
		{"#/channels/" + itoa(widget.ID), "Site", "#key"},
		{"#/channels/" + itoa(chat.ID), "Chat with us", "#key"},
		{"#/conversations/" + lead.SessionID, "", "#transcript-title"},
		{"#/leads", "Leads", "main tr[data-lead]"},
		{"#/webhooks", "Webhooks", ""},
		{"#/campaigns", "Campaigns", "#dnc-list"},
		{"#/campaigns/" + itoa(camp.ID), "Renewals", "#contact-list"},
		{"#/webhooks/" + itoa(hook.ID), "CRM", "#deliveries"},
		{"#/projects", "Projects", ""},
	}
	usable := `[...document.querySelectorAll("main button, main a.button")].filter(b => !b.disabled && b.getClientRects().length).map(b => b.textContent.trim())`
	c := newConsole(t, ctx, s.URL)
	for _, who := range []string{"owner", "editor", "viewer"} {
		c.open("", 1000, 900)
		c.signIn(who+"@example.com", apptest.Password)
		c.heading("Agents")
		var seen []string
		for _, pg := range pages {
			c.open(pg.hash, 1000, 900)
			if pg.heading != "" {
				c.heading(pg.heading)
			}
			if pg.ready != "" {
				c.poll(pg.hash+" drawn", `!!document.querySelector("`+pg.ready+`")`)
			}
			got := eval[[]string](t, ctx, usable)
			seen = append(seen, got...)
			refused := map[string][]string{"editor": ownerControls, "viewer": append(slices.Clone(ownerControls), writerControls...)}[who]
			for _, b := range got {
				if slices.Contains(refused, b) {
					t.Errorf("%s sees %q on %s", who, b, pg.hash)
				}
			}
			if who == "viewer" && pg.ready == "form[aria-label='Agent settings']" {
				if !eval[bool](t, ctx, `[...document.querySelectorAll("form[aria-label='Agent settings'] input, form[aria-label='Agent settings'] textarea, form[aria-label='Agent settings'] select")].every(e => e.disabled)`) {
					t.Error("a viewer's agent settings can be edited")
				}
				c.accessible("viewer's agent settings")
				c.shot(shotDir(t), "viewer-agent-settings.png")
			}
			if who == "editor" && pg.hash == "#/channels/"+itoa(widget.ID) {
				c.shot(shotDir(t), "editor-channel.png")
			}
		}
		want := map[string][]string{"owner": {"Delete channel", "Revoke key", "Delete endpoint", "Delete conversation", "Create agent",
			"Delete campaign", "Remove +14155550199"},
			"editor": {"Create agent", "Make a new key", "Save settings", "Add endpoint", "Create campaign", "Start", "Upload contacts", "Add number"}, "viewer": {}}[who]
		for _, b := range want {
			if !slices.Contains(seen, b) {
				t.Errorf("%s does not see %q on any page", who, b)
			}
		}
		c.press("Sign out")
		c.heading("Sign in to agentline")
	}
	if msg := strings.Join(eval[[]string](t, ctx, `window.pageErrors || []`), "; "); msg != "" {
		t.Errorf("page errors: %s", msg)
	}
}
