package app_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The agent's Tests tab in a real browser against the sandbox: add two
// scenarios through the form, run them, read each outcome (the one whose
// goal contains "fail" fails with the sandbox's reason), open a
// transcript; a second run shows the comparison with the first. Every
// control is labelled.
func TestConsoleTestsTab(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	_, _, a := acmeWithAda(t, s)
	c := newConsole(t, ctx, s.URL)
	c.open("#/agents/"+itoa(a.ID)+"/tests", 1000, 800)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Ada")
	c.poll("the empty tab", `document.querySelector("main").innerText.includes("No scenarios yet")`)
	c.accessible("tests tab")
	for _, sc := range [][3]string{{"hours", "Ask the opening hours.", "The agent answers."}, {"refund", "Get a refund, which must fail.", "The agent refuses."}} {
		c.fill("Add scenario", "Name", sc[0])
		c.fill("Add scenario", "Persona", "A customer.")
		c.fill("Add scenario", "Goal", sc[1])
		c.fill("Add scenario", "Success criteria", sc[2])
		c.press("Add scenario")
		c.poll("the scenario "+sc[0], `!!document.querySelector("[aria-label='Delete scenario `+sc[0]+`']")`)
	}
	c.press("Run all scenarios")
	c.poll("the run's outcome", `(document.querySelector("#test-run h2")?.textContent || "").includes("1 passed, 1 failed, 0 could not play")`)
	got := c.text("#test-run .test-result.failed")
	if !strings.Contains(got, "refund") || !strings.Contains(got, `Sandbox rule: the scenario's goal contains "fail".`) {
		t.Fatalf("the failed result: %q", got)
	}
	eval[any](t, ctx, `[...document.querySelectorAll("#test-run summary")].find(s => s.textContent === "Transcript of hours").click()`)
	c.poll("the transcript", `document.querySelector("#test-run details[open]")?.innerText.includes("Ask the opening hours.")`)
	c.press("Run all scenarios")
	c.poll("the comparison", `(document.querySelector("#test-run")?.innerText || "").includes("Run 1") && document.querySelector("#test-run h2").textContent.startsWith("Run 2:") && document.querySelector("#test-run h2").textContent.includes("passed")`)
	c.accessible("tests tab with a run")
	c.noErrors("tests tab")
}
