package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// axeViolation is one rule axe-core found broken, with the elements.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// axeSource is axe-core's script, for axeCheck to inject.
func axeSource(t *testing.T) string {
	t.Helper()
	source, err := os.ReadFile(filepath.Join(nodeModules(t, "axe-core"), "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return string(source)
}

// axeCheck runs axe-core (injected through DevTools, which the page's
// Content-Security-Policy does not govern) on the page and fails on every
// serious or critical violation, naming its rule and its elements; lesser
// ones are logged.
func (c console) axeCheck(source, page string) {
	c.t.Helper()
	if !eval[bool](c.t, c.ctx, `typeof axe === "object"`) {
		eval[any](c.t, c.ctx, source+";0")
	}
	found, err := chromedp.Run(c.ctx, chromedp.Evaluate[[]axeViolation](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.map(v =>
			({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.join(" "))})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		c.t.Fatalf("axe on %s: %v", page, err)
	}
	for _, v := range found {
		if v.Impact != "serious" && v.Impact != "critical" {
			c.t.Logf("%s: axe %s (%s, not failing) %s: %s", page, v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
			continue
		}
		c.t.Errorf("%s: axe %s (%s) %s: %s", page, v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
	}
}

// Every page of the console, checked with axe-core: sign-in, the
// projects (with its provider accounts and API keys), agents, an agent's every tab, channels, a widget and a form
// channel (its field builder), conversations, campaigns (with the
// do-not-call list) and a campaign, leads, analytics (empty),
// members, the account, the accounts page, the project's and the
// instance's audit logs, invitation and reset pages;
// and editors open (the
// analysis data builder in JSON mode, a tool's editor). The conversation
// pages are checked in TestConsoleToolEditAndConversations.
// Any serious or critical violation
// fails.
func TestConsoleAccessibility(t *testing.T) {
	t.Parallel()
	source := axeSource(t)
	ctx := newBrowser(t)
	carrier := twiliofake.New(twiliofake.Options{})
	defer carrier.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test",
		"TWILIO_ACCOUNT_SID": carrier.AccountSID(), "TWILIO_AUTH_TOKEN": carrier.AuthToken(), "TWILIO_API_BASE_URL": carrier.URL(),
	})
	owner, tok := s.NewUser(t, "owner@example.com")
	admin := true
	if _, err := s.App.Store.UpdateUser(context.Background(), owner.ID, agentline.UserChange{Admin: &admin}); err != nil {
		t.Fatal(err)
	}
	var p agentline.Project
	var a agentline.Agent
	var ch struct {
		ID int64 `json:"id"`
	}
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "voice_widget", "name": "site", "agent_id": a.ID}, &ch)
	var formCh struct {
		ID int64 `json:"id"`
	}
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "form", "name": "contact"}, &formCh)
	var inv agentline.Invite
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/invites", tok, map[string]any{"email": "vera@example.com", "role": "viewer"}, &inv)
	// The agent's editor with rows in its data builder, and a tool to edit.
	s.Must(t, 200, "PATCH", "/api/agents/"+itoa(a.ID), tok, map[string]any{"analysis": map[string]any{"summary": true, "success_criteria": "Booked",
		"data_schema": map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]string{"type": "string"}, "topic": map[string]any{"type": "string", "enum": []string{"a", "b"}}}}}}, nil)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, map[string]any{"name": "lookup", "url": "https://hooks.example.com/x",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]string{"type": "string"}}}}, nil)
	// A campaign with contacts, and a number on the do-not-call list.
	var camp struct {
		ID int64 `json:"id"`
	}
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/campaigns", tok, map[string]any{"name": "Renewals", "agent_id": a.ID}, &camp)
	s.Must(t, 200, "POST", "/api/campaigns/"+itoa(camp.ID)+"/contacts", tok, []map[string]any{
		{"phone_number": "+14155550101", "variables": map[string]string{"first_name": "Ada"}}, {"phone_number": "+14155550102", "timezone": "America/Chicago"}}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/dnc", tok, map[string]string{"phone_number": "+14155550102", "reason": "asked by email"}, nil)
	// A test scenario with a completed run, for the Tests tab.
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/scenarios", tok, map[string]any{"name": "hours", "persona": "A visitor",
		"goal": "Ask the opening hours", "success_criteria": "The agent answers."}, nil)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/test-runs", tok, map[string]any{}, nil)
	// An own account with the sandbox's key, which the sandbox accepts.
	s.Must(t, 200, "PUT", "/api/projects/"+itoa(p.ID)+"/providers/openai", tok, map[string]string{"api_key": "sk-sandbox"}, nil)
	// An API key, listed on the projects page.
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/api-keys", tok, map[string]string{"name": "deploy bot", "role": "editor"}, nil)
	c := newConsole(t, ctx, s.URL)
	code := source

	c.open("", 1000, 800)
	c.heading("Sign in to agentline")
	c.axeCheck(code, "sign-in")
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Agents")
	agent := "#/agents/" + itoa(a.ID)
	for _, pg := range []struct{ hash, title, ready string }{
		{"#/agents", "Agents", `!!document.getElementById("checklist-title")`},
		{agent, "Ada", ""},
		{agent + "/test", "Ada", ""},
		{agent + "/tools", "Ada", ""},
		{agent + "/knowledge", "Ada", ""},
		{agent + "/tests", "Ada", `!!document.querySelector("#test-run .test-result")`},
		{agent + "/phone", "Ada", `!!document.querySelector("form[aria-label='Search numbers']")`},
		{"#/channels", "Channels", ""},
		{"#/channels/" + itoa(ch.ID), "site", ""},
		{"#/conversations", "Conversations", ""},
		{"#/campaigns", "Campaigns", `!!document.getElementById("dnc-list")`},
		{"#/campaigns/" + itoa(camp.ID), "Renewals", `!!document.getElementById("contact-list")`},
		{"#/leads", "Leads", ""},
		{"#/analytics", "Analytics", ""},
		{"#/members", "Members of Acme", ""},
		{"#/projects", "Projects", `!!document.querySelector("#providers [data-provider=openai]") && !!document.querySelector("#api-keys [data-api-key]")`},
		{"#/account", "Your account", ""},
		{"#/channels/" + itoa(formCh.ID), "contact", `document.querySelectorAll(".builder-row").length > 0`},
		{"#/analytics", "Analytics", `document.querySelector("main").innerText.includes("No conversations yet.")`},
		{"#/admin", "Accounts", ""},
		{"#/audit", "Audit log", `!!document.querySelector("table.audit tbody tr")`},
		{"#/admin/audit", "Instance audit log", `!!document.querySelector("table.audit tbody tr")`},
		{"#/invite/ali_unused", "Invitation", ""},
		{"#/reset/alr_unused", "Set a new password", ""},
		{"#/invite/" + inv.Token, "Invitation to Acme", ""},
	} {
		c.open(pg.hash, 1000, 800)
		c.heading(pg.title)
		c.poll(pg.hash+" loaded", `!document.querySelector("main").hasAttribute("aria-busy")`)
		if pg.ready != "" {
			c.poll(pg.hash+" ready", pg.ready)
		}
		c.axeCheck(code, pg.hash)
	}
	// Editors open: the data builder in JSON mode, a tool's editor.
	c.open(agent, 1000, 800)
	c.poll("the data builder", `document.querySelectorAll(".builder-row").length === 2`)
	c.press("Edit as JSON")
	c.poll("the JSON mode", `!!document.querySelector(".builder-json:not([hidden]) textarea")`)
	c.axeCheck(code, "agent settings, data as JSON")
	c.open(agent+"/tools", 1000, 800)
	c.press("Edit lookup")
	c.poll("the tool editor", `!!document.querySelector("form[aria-label='Edit tool']")`)
	c.axeCheck(code, "the tool editor")
	c.noErrors("accessibility")
}

// fillAria sets the control whose aria-label is label (a builder's row
// controls have no visible label of their own) and tells the page.
func (c console) fillAria(label, value string) {
	c.t.Helper()
	c.poll("the control "+label, `!!document.querySelector('[aria-label=`+js(label)+`]')`)
	eval[any](c.t, c.ctx, `(el => { if (el.type === "checkbox") el.checked = `+js(value)+` === "true"; else el.value = `+js(value)+`;
		el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); })(document.querySelector('[aria-label=`+js(label)+`]'))`)
}
