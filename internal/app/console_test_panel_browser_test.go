package app_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// A first run in a real browser: the sandbox is on (as `make run` turns
// it on in development without OPENAI_API_KEY), the console says so on
// every page, the project's checklist shows what is done, and the agent
// page's Test panel talks to the sandbox by text and by voice (the fake
// microphone) with no channel and no key, the transcript showing live.
func TestConsoleFirstRunTestPanel(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	s.NewUser(t, "owner@example.com")
	c := newConsole(t, ctx, s.URL)
	shots := screenshotDir(t)

	c.open("", 1000, 800)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Projects")
	// Before the first project the header holds no project switch (and
	// no "null" where it would be).
	if top := c.text("#top"); strings.Contains(top, "null") {
		t.Errorf("header before the first project: %q", top)
	}
	c.poll("the sandbox banner", `document.getElementById("banners").textContent.includes("Sandbox: a pretend provider. Set OPENAI_API_KEY to talk to a real model")`)
	c.fill("Create project", "Name", "Acme")
	c.press("Create project")
	c.heading("Agents")
	// The sandbox counts as a provider.
	c.poll("the checklist", `document.getElementById("checklist-title").textContent === "Get started: 1 of 5 done"`)
	c.fill("Create agent", "Name", "Ada")
	c.fill("Create agent", "Instructions", "You answer questions about the Acme shop.")
	c.press("Create agent")
	c.heading("Ada")
	c.press("Agents")
	c.heading("Agents")
	c.poll("the checklist with an agent", `document.getElementById("checklist-title").textContent === "Get started: 2 of 5 done"`)
	// The webhook item links to the webhooks section, and is done once the
	// project has an enabled endpoint.
	if href := eval[string](t, ctx, `[...document.querySelectorAll(".checklist li")].find(li => li.textContent.includes("A webhook endpoint")).querySelector("a").getAttribute("href")`); href != "#/webhooks" {
		t.Errorf("the webhook item links to %q", href)
	}
	storeEndpoint(t, s, 1, "https://127.0.0.1:9/hook")
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	c.poll("the checklist with an endpoint", `(h => !!h && h.textContent === "Get started: 3 of 5 done")(document.getElementById("checklist-title"))`)
	c.shot(shots, "console-checklist.png")
	c.press("Try it")
	c.heading("Ada")
	c.poll("the banner on the agent page", `document.getElementById("banners").textContent.includes("Sandbox")`)

	// By text.
	c.press("Chat by text")
	c.poll("a live test session", `document.getElementById("test-status").textContent.startsWith("Live")`)
	c.fill("Send a message", "Message", "Where is my order?")
	c.press("Send")
	c.poll("the typed line and the agent's answer", `(t => t.includes("You: Where is my order?") && t.includes("Agent:"))(document.getElementById("test-transcript").textContent)`)
	c.accessible("test panel")
	c.shot(shots, "console-agent-test.png")
	c.press("End")
	c.poll("the end", `document.getElementById("test-status").textContent === "Ended."`)

	// By voice: the fake microphone talks, the sandbox answers.
	c.press("Talk (microphone)")
	c.poll("a live voice session", `document.getElementById("test-status").textContent.startsWith("Live")`)
	c.poll("the agent's spoken answer", `document.querySelectorAll("#test-transcript li.assistant").length > 0`)
	c.press("End")
	c.poll("the end", `document.getElementById("test-status").textContent === "Ended."`)

	// The tests are kept with the conversations.
	c.press("Conversations")
	c.heading("Conversations")
	c.poll("the test conversations", `document.querySelector("main tbody") && document.querySelector("main tbody").textContent.includes("Console test")`)
	c.noErrors("first run")
}
