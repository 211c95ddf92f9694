package app_test

import (
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The audit log in a real browser: the owner sees every change of the
// project, a person's and a key's (by its prefix), each with what changed;
// filters by action narrow it; a page of older entries follows; an editor
// has no Audit log in the navigation.
func TestConsoleAuditLog(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	editor, editorTok := s.NewUser(t, "editor@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	// Enough entries for a second page (50 a page), older than the rest.
	for i := range 55 {
		s.Must(t, 200, "PATCH", "/api/projects/"+itoa(p.ID), tok, map[string]string{"name": "Acme " + itoa(int64(i))}, nil)
	}
	s.Must(t, 200, "PATCH", "/api/projects/"+itoa(p.ID), tok, map[string]string{"name": "Acme"}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	s.Join(t, tok, p.ID, editorTok, "editor@example.com", agentline.RoleEditor)
	key := newKey(t, s, tok, p.ID, agentline.RoleEditor)
	s.Must(t, 200, "PATCH", "/api/agents/"+itoa(a.ID), key.Key, map[string]string{"greeting": "Hello from Acme!"}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", tok, map[string]any{"url": "https://hooks.example.com/acme", "events": []string{"*"}}, nil)
	var camp agentline.Campaign
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/campaigns", tok, map[string]any{"name": "Renewals", "agent_id": a.ID}, &camp)
	s.Must(t, 200, "POST", "/api/campaigns/"+itoa(camp.ID)+"/cancel", tok, nil, nil)
	s.Must(t, 200, "PATCH", "/api/projects/"+itoa(p.ID)+"/members/"+itoa(editor.ID), tok, map[string]string{"role": "viewer"}, nil)

	c := newConsole(t, ctx, s.URL)
	c.open("", 1200, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Agents")
	c.press("Audit log")
	c.heading("Audit log")
	c.poll("the first page", `document.querySelectorAll("table.audit tbody tr").length === 50`)
	screenshot(t, ctx, screenshotDir(t), "console-audit-log.png")
	c.press("Older entries")
	c.poll("the older page", `document.querySelectorAll("table.audit tbody tr").length > 50`)

	c.fill("Filters", "Action (such as agent.update)", "agent.update")
	c.press("Apply filters")
	c.poll("the key's change", `(rows => rows.length === 1 && rows[0].innerText.includes("API key `+key.Prefix+`") &&
		rows[0].innerText.includes("Hello from Acme!"))([...document.querySelectorAll("table.audit tbody tr")])`)
	c.fill("Filters", "Action (such as agent.update)", "")
	c.fill("Filters", "Who (email or key prefix)", "owner@example.com")
	c.fill("Filters", "Resource (such as agent)", "webhook")
	c.press("Apply filters")
	c.poll("the webhook's creation", `(rows => rows.length === 1 && rows[0].innerText.includes("webhook.create") &&
		rows[0].innerText.includes("[masked]"))([...document.querySelectorAll("table.audit tbody tr")])`)
	c.fill("Filters", "Resource (such as agent)", "")
	c.fill("Filters", "Who (email or key prefix)", "")
	c.press("Apply filters")
	c.poll("the whole log again", `document.querySelectorAll("table.audit tbody tr").length === 50`)
	c.accessible("audit log")
	c.noErrors("audit log")

	// A member who is no owner has no Audit log to open.
	c2 := newConsole(t, newBrowser(t), s.URL)
	c2.open("", 1000, 800)
	c2.signIn("editor@example.com", apptest.Password)
	c2.heading("Agents")
	c2.poll("no Audit log link", `![...document.querySelectorAll("nav a")].some(a => a.textContent === "Audit log")`)
}
