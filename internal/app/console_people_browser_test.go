package app_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// People in a real browser: the owner changes their password (a wrong
// current one first), invites someone as a viewer and copies the link
// shown once, which stays until dismissed; in a second browser context
// (its own storage, as another person's browser) the invitee opens the
// link, which names project, role and inviter, creates an account and
// signs in as a viewer, who sees no owner's controls; the owner renames
// the project, and deletes another one (cancelled first).
func TestConsolePeople(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, nil)
	s.NewUser(t, "owner@example.com")
	c := newConsole(t, ctx, s.URL)
	shots := screenshotDir(t)

	c.open("", 1000, 800)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Projects")
	c.fill("Create project", "Name", "Acme")
	c.press("Create project")
	c.heading("Agents")

	// The password, from the account page behind the email in the header.
	c.press("owner@example.com")
	c.heading("Your account")
	c.fill("Change password", "Current password", "not my password")
	c.fill("Change password", "New password", "a brand new password")
	c.press("Change password")
	c.poll("the current password error", field("Change password", "Current password")+`.getAttribute("aria-invalid") === "true"`)
	if msg := c.fieldError("Change password", "Current password"); !strings.Contains(msg, "current password is wrong") {
		t.Errorf("current password error: %q", msg)
	}
	c.fill("Change password", "Current password", apptest.Password)
	c.fill("Change password", "New password", "a brand new password")
	c.press("Change password")
	c.poll("changed", `document.querySelector("main p[role=status]").textContent.startsWith("Password changed")`)
	c.accessible("account")
	c.shot(shots, "console-account.png")
	s.Login(t, "owner@example.com", "a brand new password")

	// An invitation link, shown once (no mail here).
	c.press("Members")
	c.heading("Members of Acme")
	c.fill("Invite", "Email to invite", "vera@example.com")
	c.fill("Invite", "Role", "viewer")
	c.press("Invite")
	c.poll("the invite link", `!!document.getElementById("invite-link")`)
	link := c.text("#invite-link")
	if !strings.HasPrefix(link, s.URL+"/#/invite/ali_") {
		t.Fatalf("invite link %q", link)
	}
	c.poll("the pending invite", `[...document.querySelectorAll("main td")].some(td => td.textContent === "vera@example.com")`)
	// The link stays on screen when the page is drawn anew, until dismissed.
	c.press("Agents")
	c.heading("Agents")
	c.press("Members")
	c.heading("Members of Acme")
	c.poll("the link kept", `!!document.getElementById("invite-link")`)
	c.accessible("members with an invite")
	c.shot(shots, "console-invite.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 800)); err != nil {
		t.Fatal(err)
	}
	c.accessible("members with an invite at 360 px")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 800)); err != nil {
		t.Fatal(err)
	}
	c.press("Dismiss")
	c.poll("the link dismissed", `!document.getElementById("invite-link")`)

	// The invitee, in a browser context of their own: the page names the
	// project, the role and who invited.
	vctx, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	v := newConsole(t, vctx, s.URL)
	if err := chromedp.Do(vctx, chromedp.EmulateViewport(1000, 800), chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	v.heading("Invitation to Acme")
	if offer := v.text("main p"); offer != "owner@example.com invited vera@example.com to join the project Acme as a viewer. The invitation works once, until "+offer[strings.Index(offer, "until ")+6:] {
		t.Errorf("the offer reads %q", offer)
	}
	v.fill("Create account and join", "Choose a password", "short")
	v.press("Create account and join")
	v.poll("the password error", field("Create account and join", "Choose a password")+`.getAttribute("aria-invalid") === "true"`)
	v.fill("Create account and join", "Choose a password", "vera's own password")
	v.accessible("invitation")
	v.shot(shots, "console-invite-accept.png")
	v.press("Create account and join")
	v.poll("sign in next", `!!document.querySelector("main .notice")?.textContent.includes("Sign in as vera@example.com to open Acme")`)
	v.fill("Sign in and open the project", "Password", "vera's own password")
	v.press("Sign in and open the project")
	v.heading("Agents")
	v.press("Projects")
	v.heading("Projects")
	v.poll("the viewer's role", `[...document.querySelectorAll("main td")].some(td => td.textContent === "viewer")`)
	if eval[bool](t, vctx, `[...document.querySelectorAll("button")].some(b => b.textContent === "Delete project")`) {
		t.Error("a viewer is offered Delete project")
	}
	// A viewer sees the members, and no owner's controls.
	v.press("Members")
	v.heading("Members of Acme")
	if eval[bool](t, vctx, `!!document.querySelector("main select, main form") || [...document.querySelectorAll("main button")].some(b => b.textContent === "Remove")`) {
		t.Error("a viewer is offered role pickers, Remove or the invitation form")
	}
	v.shot(shots, "console-members-viewer.png")
	v.noErrors("invitee")
	// The link worked once.
	if r := s.Do(t, "POST", "/api/invites/accept", "", map[string]string{"token": link[strings.LastIndex(link, "/")+1:], "password": "another password"}); r.Status != 404 {
		t.Errorf("the link a second time = %s", r)
	}

	// Rename, then delete another project (cancelled first).
	c.press("Projects")
	c.heading("Projects")
	c.fill("Save project", "Project name", "Acme Inc")
	c.fill("Save project", "Keep call recordings (days)", "90")
	// The page is drawn anew after a save: mark this drawing's forms, so
	// that the next fill waits for the new ones.
	eval[any](t, ctx, `document.querySelectorAll("main form").forEach((f) => (f.dataset.stale = "1"))`)
	c.press("Save project")
	c.poll("the new name", `document.getElementById("project-switch").selectedOptions[0].textContent === "Acme Inc"`)
	c.poll("the page drawn anew", `!!document.querySelector("main form") && !document.querySelector("main form[data-stale]")`)
	c.fill("Create project", "Name", "Scratch")
	c.press("Create project")
	c.heading("Agents")
	c.press("Projects")
	c.heading("Projects")
	c.poll("Scratch is current", `document.querySelector("main h2").textContent === "This project: Scratch"`)
	c.shot(shots, "console-projects.png")
	c.press("Delete project")
	c.poll("the dialog", `!!document.querySelector("dialog[open]")`)
	c.press("Cancel")
	c.poll("no dialog", `!document.querySelector("dialog[open]")`)
	c.press("Delete project")
	c.poll("the dialog", `!!document.querySelector("dialog[open]")`)
	eval[any](t, ctx, `[...document.querySelectorAll("dialog[open] button")].find(b => b.textContent === "Delete project").click()`)
	c.poll("Scratch gone", `![...document.querySelectorAll("#project-switch option")].some(o => o.textContent === "Scratch")`)
	var list []map[string]any
	s.Must(t, 200, "GET", "/api/projects", s.Login(t, "owner@example.com", "a brand new password"), nil, &list)
	if len(list) != 1 || list[0]["name"] != "Acme Inc" {
		t.Errorf("projects after rename and delete: %v", list)
	}
	c.noErrors("people")
}
