package app_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
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
	t.Parallel()
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

// notFounds collects the URLs the browser got a 404 for: Chromium logs
// each as "Failed to load resource" in the page's console.
type notFounds struct {
	mu   sync.Mutex
	urls []string
}

func watchNotFounds(t *testing.T, ctx context.Context) *notFounds {
	t.Helper()
	nf := &notFounds{}
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventResponseReceived); ok && e.Response.Status == 404 {
			nf.mu.Lock()
			nf.urls = append(nf.urls, e.Response.URL)
			nf.mu.Unlock()
		}
	})
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{})
			return err
		}))
	}
	if err != nil {
		t.Fatal(err)
	}
	return nf
}

func (nf *notFounds) list() []string {
	nf.mu.Lock()
	defer nf.mu.Unlock()
	return slices.Clone(nf.urls)
}

// A channel without a key (every new one) is shown without the browser
// logging a 404: neither its page nor the agents page's checklist asks
// for a key that does not exist as an error. Its page offers to make one.
func TestConsoleChannelWithoutKeyLogsNo404(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	tok, p, a := acmeWithAda(t, s)
	var ch agentline.Channel
	s.Must(t, 201, "POST", fmt.Sprintf("/api/projects/%d/channels", p.ID), tok, map[string]any{"type": "voice_widget", "name": "Site", "agent_id": a.ID}, &ch)
	nf := watchNotFounds(t, ctx)
	c := newConsole(t, ctx, s.URL)
	c.open("", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Agents")
	c.poll("the checklist", `document.querySelector("main").textContent.includes("Site") || document.querySelectorAll("main li").length > 0`)
	c.open(fmt.Sprintf("#/channels/%d", ch.ID), 1000, 900)
	c.heading("Site")
	c.poll("the key card", `(k => !!k && k.textContent.includes("No key yet"))(document.getElementById("key"))`)
	c.shot(shotDir(t), "channel-without-key.png")
	if got := nf.list(); len(got) > 0 {
		t.Errorf("the browser got 404s: %v", got)
	}
	c.noErrors("channel page")
}

// searchNumbers opens an agent's Phone tab and searches numbers in 415;
// it returns the first Buy button's text.
func searchNumbers(t *testing.T, c console, agentID int64) string {
	t.Helper()
	c.open(fmt.Sprintf("#/agents/%d/phone", agentID), 1000, 900)
	c.heading("Ada")
	c.poll("the number search", `!!document.querySelector("form[aria-label='Search numbers']")`)
	c.fill("Search numbers", "Area code", "415")
	c.press("Search numbers")
	c.poll("numbers", `[...document.querySelectorAll("button")].some(b => b.textContent.startsWith("Buy +1415"))`)
	return eval[string](t, c.ctx, `[...document.querySelectorAll("button")].find(b => b.textContent.startsWith("Buy +1415")).textContent`)
}

// Buying a number from a real carrier charges its account: the console
// asks first, and Cancel buys nothing.
func TestConsoleBuyAsksFirst(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	carrier := twiliofake.New(twiliofake.Options{})
	defer carrier.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "OPENAI_API_KEY": "sk-test",
		"TWILIO_ACCOUNT_SID": carrier.AccountSID(), "TWILIO_AUTH_TOKEN": carrier.AuthToken(), "TWILIO_API_BASE_URL": carrier.URL(),
	})
	_, tok := s.NewUser(t, "owner@example.com")
	a := phoneAgent(t, s, tok)
	c := newConsole(t, ctx, s.URL)
	c.open("", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Agents")
	buy := searchNumbers(t, c, a.ID)
	if eval[bool](t, ctx, `document.querySelector("main").textContent.includes("pretend")`) {
		t.Error("a real carrier's numbers are called pretend")
	}
	c.press(buy)
	c.poll("the confirmation", `!!document.querySelector("dialog[open]")`)
	if q := c.text("dialog[open] p"); !strings.Contains(q, strings.TrimPrefix(buy, "Buy ")) || !strings.Contains(q, "charge") {
		t.Errorf("the confirmation says %q", q)
	}
	c.shot(shotDir(t), "buy-confirmation.png")
	c.press("Cancel")
	c.poll("no dialog", `!document.querySelector("dialog[open]")`)
	if owned := carrier.Numbers(); len(owned) != 0 {
		t.Fatalf("Cancel bought %+v", owned)
	}
	c.press(buy)
	c.poll("the confirmation", `!!document.querySelector("dialog[open]")`)
	c.press("Buy number")
	c.poll("the number", `!!document.querySelector(".number")`)
	if owned := carrier.Numbers(); len(owned) != 1 || "Buy "+owned[0].PhoneNumber != buy {
		t.Fatalf("the carrier's numbers: %+v", owned)
	}
	c.noErrors("buying")
}

// With the sandbox's pretend carrier, the Phone tab says that its numbers
// are pretend (nothing is charged, no phone reaches them) before and after
// buying one.
func TestConsoleSandboxNumbersArePretend(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "localhost"})
	_, tok := s.NewUser(t, "owner@example.com")
	a := phoneAgent(t, s, tok)
	c := newConsole(t, ctx, s.URL)
	c.open("", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Agents")
	buy := searchNumbers(t, c, a.ID)
	main := func() string { return c.text("main") }
	if m := main(); !strings.Contains(m, "pretend") || !strings.Contains(m, "nothing is charged") || strings.Contains(m, "charges the carrier account") {
		t.Errorf("the Phone tab before buying: %q", m)
	}
	c.shot(shotDir(t), "sandbox-phone-tab.png")
	c.press(buy)
	if eval[bool](t, ctx, `!!document.querySelector("dialog[open]")`) {
		c.press("Buy number")
	}
	c.poll("the number", `!!document.querySelector(".number")`)
	if m := main(); !strings.Contains(m, "pretend") || !strings.Contains(m, "agentline call --to "+strings.TrimPrefix(buy, "Buy ")) {
		t.Errorf("the Phone tab after buying: %q", m)
	}
	c.shot(shotDir(t), "sandbox-phone-number.png")
	c.noErrors("sandbox phone tab")
}

func phoneAgent(t *testing.T, s *apptest.Server, tok string) agentline.Agent {
	t.Helper()
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", fmt.Sprintf("/api/projects/%d/agents", p.ID), tok, map[string]string{"name": "Ada"}, &a)
	return a
}
