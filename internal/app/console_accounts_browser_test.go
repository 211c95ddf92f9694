package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/mail/mailtest"
	"github.com/agentline/agentline/internal/store"
)

// Accounts in a real browser, with a real SMTP server: "Forgot password?"
// on the sign-in page mails a link whose page sets a new password; an
// invitation for an existing account is emailed and accepted by signing in
// on its page; the instance administrator's Accounts page makes a reset
// link (emailed) and disables an account.
func TestConsoleAccountsWithMail(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	srv := mailtest.Start(t, mailtest.Options{})
	s := apptest.StartFresh(t, store.SQLite, mailEnv(srv))
	_, owner := s.NewUser(t, "owner@example.com")
	bob, _ := s.NewUser(t, "bob@example.com")
	shots := screenshotDir(t)

	// Forgot password: the answer, the mail, the reset page, sign-in.
	c := newConsole(t, ctx, s.URL)
	c.open("", 1000, 800)
	c.heading("Sign in to agentline")
	c.poll("Forgot password?", `[...document.querySelectorAll("summary")].some(x => x.textContent === "Forgot password?")`)
	eval[any](t, ctx, `document.querySelector("details").open = true`)
	c.fill("Email me a reset link", "Your account's email", bob.Email)
	c.press("Email me a reset link")
	c.poll("the answer", `document.querySelector("details p[role=status]").textContent.startsWith("If an account uses this email")`)
	c.accessible("sign-in with Forgot password?")
	c.shot(shots, "console-forgot-password.png")
	link := resetLink.FindString(srv.Wait(t, 1, 10*time.Second)[0].Text)
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	c.heading("Set a new password")
	c.fill("Set password", "New password", "bob's new password")
	c.accessible("reset page")
	c.press("Set password")
	c.heading("Sign in to agentline")
	c.poll("the message", `!!document.querySelector("main .notice")?.textContent.includes("Your password is set")`)
	c.fill("Sign in", "Password", "bob's new password")
	c.press("Sign in")
	c.heading("Projects")

	// An invitation for bob, who has an account: its page, then sign in.
	var p struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/projects", owner, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/invites", owner, map[string]string{"email": bob.Email, "role": "editor"}, nil)
	link = inviteLink.FindString(srv.Wait(t, 2, 10*time.Second)[1].Text)
	bctx, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	b := newConsole(t, bctx, s.URL)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1000, 800), chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	b.heading("Invitation to Acme")
	b.fill("Sign in and accept", "Password", "bob's new password")
	b.press("Sign in and accept")
	b.heading("Agents")
	b.poll("the welcome", `!!document.querySelector("main .notice")?.textContent.includes("You are now an editor of Acme")`)
	b.shot(shots, "console-invite-joined.png")
	b.noErrors("bob")

	// The administrator's Accounts page.
	a := newConsole(t, ctx, s.URL)
	c.press("Sign out")
	c.heading("Sign in to agentline")
	a.signIn(apptest.AdminEmail, s.AdminPassword(t))
	a.poll("the Accounts link", `[...document.querySelectorAll("header a, #top a")].some(x => x.textContent === "Accounts")`)
	a.press("Accounts")
	a.heading("Accounts")
	eval[any](t, ctx, `[...document.querySelectorAll("main tr")].find(r => r.textContent.includes("bob@example.com")).querySelector("button:nth-child(3)").click()`)
	a.poll("emailed", `!!document.getElementById("link-shown")?.textContent.includes("A reset link was emailed to bob@example.com")`)
	if m := srv.Wait(t, 3, 10*time.Second)[2]; m.To[0] != bob.Email || !strings.Contains(m.Text, "administrator") {
		t.Fatalf("admin reset mail = %+v", m)
	}
	a.accessible("accounts")
	a.shot(shots, "console-accounts.png")
	eval[any](t, ctx, `[...document.querySelectorAll("main tr")].find(r => r.textContent.includes("bob@example.com")).querySelector("button:nth-child(2)").click()`)
	a.poll("the dialog", `!!document.querySelector("dialog[open]")`)
	eval[any](t, ctx, `[...document.querySelectorAll("dialog[open] button")].find(b => b.textContent === "Disable").click()`)
	a.poll("disabled", `[...document.querySelectorAll("main tr")].find(r => r.textContent.includes("bob@example.com")).textContent.includes("disabled")`)
	if r := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": bob.Email, "password": "bob's new password"}); r.Status != 403 {
		t.Fatalf("bob signs in after being disabled = %s", r)
	}
	a.noErrors("admin")
}
