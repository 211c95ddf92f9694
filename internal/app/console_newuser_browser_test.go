package app_test

import (
	"os"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// shotDir is where this file's tests leave their screenshots:
// AGENTLINE_SHOTS when set (to look at them), else screenshotDir's.
func shotDir(t *testing.T) string {
	if d := os.Getenv("AGENTLINE_SHOTS"); d != "" {
		return d
	}
	return screenshotDir(t)
}

// The name shown to visitors (branding.display_name) can be changed in
// the project editor after the project was made, and cleared; the API
// reads back what was saved.
func TestConsoleEditsDisplayName(t *testing.T) {
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	c := newConsole(t, ctx, s.URL)
	c.open("", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Projects")
	c.fill("Create project", "Name", "Acme")
	c.fill("Create project", "Name shown to visitors", "Acme help")
	c.press("Create project")
	c.heading("Agents")
	c.press("Projects")
	c.heading("Projects")

	var p agentline.Project
	read := func() agentline.Project {
		var list []agentline.Project
		s.Must(t, 200, "GET", "/api/projects", tok, nil, &list)
		if len(list) != 1 {
			t.Fatalf("projects: %+v", list)
		}
		return list[0]
	}
	if got := eval[string](t, ctx, field("Save project", "Name shown to visitors")+`.value`); got != "Acme help" {
		t.Fatalf("the editor shows the display name %q, want Acme help", got)
	}
	save := func(display string) {
		c.fill("Save project", "Name shown to visitors", display)
		eval[any](t, ctx, `document.querySelectorAll("main form").forEach((f) => (f.dataset.stale = "1"))`)
		c.press("Save project")
		c.poll("the page drawn anew", `!!document.querySelector("main form") && !document.querySelector("main form[data-stale]")`)
	}
	save("Acme Support")
	if p = read(); p.Branding.DisplayName != "Acme Support" || p.Name != "Acme" {
		t.Fatalf("after saving the display name: %+v", p)
	}
	if got := eval[string](t, ctx, field("Save project", "Name shown to visitors")+`.value`); got != "Acme Support" {
		t.Errorf("the editor shows %q after saving", got)
	}
	c.accessible("projects")
	c.shot(shotDir(t), "project-display-name.png")
	save("")
	if p = read(); p.Branding.DisplayName != "" {
		t.Fatalf("after clearing the display name: %+v", p)
	}
	c.noErrors("projects")
}
