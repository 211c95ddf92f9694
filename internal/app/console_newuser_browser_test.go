package app_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

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
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	var ch agentline.Channel
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", fmt.Sprintf("/api/projects/%d/agents", p.ID), tok, map[string]string{"name": "Ada"}, &a)
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
