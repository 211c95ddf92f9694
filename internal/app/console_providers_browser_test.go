package app_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The Provider accounts card on the projects page: an owner sets the
// project's OpenAI-compatible account (the sandbox takes its own key, and
// refuses another with its answer shown), sees it by base URL and last
// four characters only, and removes it; the page never shows the key.
func TestConsoleProviderAccounts(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	c := newConsole(t, ctx, s.URL)
	c.open("#/projects", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Projects")
	const form = "Set the OpenAI-compatible account"
	c.poll("the card", `!!document.querySelector("#providers [data-provider=openai]")`)
	if got := c.text("#providers [data-provider=openai]"); !strings.Contains(got, "Uses this server's account") {
		t.Fatalf("before: %q", got)
	}
	c.fill(form, "API key", "sk-not-the-sandbox-key")
	c.press("Save account")
	c.poll("the refusal", `document.querySelector("form[aria-label='`+form+`']").textContent.includes("refused the key (status 401")`)

	c.fill(form, "API key", "sk-sandbox")
	c.press("Save account")
	c.poll("the saved account", `document.querySelector("#providers [data-provider=openai]").textContent.includes("key ending in dbox")`)
	if got := c.text("#providers-said"); !strings.Contains(got, "saved") {
		t.Errorf("status after saving: %q", got)
	}
	if v := eval[string](t, ctx, `[...document.querySelectorAll("#providers input")].map(i => i.value).join("|")`); strings.Contains(v, "sk-") {
		t.Errorf("the key stayed in a field: %q", v)
	}
	if body := eval[string](t, ctx, `document.querySelector("main").innerText`); strings.Contains(body, "sk-sandbox") && !strings.Contains(body, "takes the API key sk-sandbox") {
		t.Errorf("the page shows the key")
	}
	c.accessible("projects with a provider account")

	c.press("Remove the OpenAI-compatible account")
	c.press("Remove account")
	c.poll("the account removed", `document.querySelector("#providers [data-provider=openai]").textContent.includes("Uses this server's account")`)
	var list []agentline.ProviderAccount
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/providers", tok, nil, &list)
	if len(list) != 0 {
		t.Errorf("after Remove: %+v", list)
	}
	c.noErrors("the projects page")
}
