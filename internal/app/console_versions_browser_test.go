package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The agent's Versions tab lists every save, shows what a version changed
// and rolls back to an older one; axe-core finds nothing serious.
func TestConsoleVersions(t *testing.T) {
	t.Parallel()
	source := axeSource(t)
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "instructions": "Be brief."}, &a)
	for _, text := range []string{"Be brief and kind.", "Be brief, kind and exact."} {
		s.Must(t, 200, "PATCH", "/api/agents/"+itoa(a.ID), tok, map[string]string{"instructions": text}, nil)
	}

	c := newConsole(t, ctx, s.URL)
	page := "#/agents/" + itoa(a.ID) + "/versions"
	c.open(page, 1100, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Ada")
	c.poll("three versions", `document.querySelectorAll("#versions-title ~ .table tbody tr").length === 3`)
	if got := c.text("#versions-summary"); !strings.Contains(got, "run version 3") {
		t.Errorf("summary: %q", got)
	}
	c.press("Changes in version 3")
	c.poll("the diff", `!!document.querySelector("#version-diff table")`)
	if got := c.text("#version-diff"); !strings.Contains(got, "Instructions") || !strings.Contains(got, "Be brief, kind and exact.") {
		t.Errorf("diff: %q", got)
	}
	c.press("Roll back to version 1")
	c.press("Roll back to version 1") // the dialog's
	c.poll("the rollback", `document.querySelector("#versions-summary").textContent.includes("run version 1")`)
	var got agentline.Agent
	s.Must(t, 200, "GET", "/api/agents/"+itoa(a.ID), tok, nil, &got)
	if got.PublishedVersion != 1 || got.Version != 3 {
		t.Errorf("after the rollback: %+v", got)
	}
	c.accessible("versions")
	c.axeCheck(source, page)
	c.shot(shotDir(t), "agent-versions.png")

	// A conversation's page names the version it ran, linked to the tab.
	var ch agentline.Channel
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "voice_widget", "name": "Site", "agent_id": a.ID}, &ch)
	id, _ := agentline.NewSessionID()
	if _, err := s.App.Store.CreateWidgetSession(context.Background(), agentline.WidgetSession{ID: id, ProjectID: p.ID, ChannelID: ch.ID,
		AgentID: a.ID, Provider: agentline.ProviderOpenAI, Model: "gpt-realtime", AgentVersion: 2}, nil); err != nil {
		t.Fatal(err)
	}
	c.open("#/conversations/"+id, 1100, 900)
	c.poll("the conversation's version", `[...document.querySelectorAll("dl.facts dd a")].some(a => a.textContent === "Version 2" && a.getAttribute("href").endsWith("/versions"))`)
	c.noErrors("versions")
}
