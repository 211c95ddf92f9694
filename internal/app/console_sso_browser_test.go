package app_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/auth/oidctest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// startSSO starts agentline with single sign-on through a loopback OpenID
// provider, allowing example.com. Its public URL must be known before it
// starts (the provider redirects back to it), so the port is picked first.
func startSSO(t *testing.T, d store.Dialect, env map[string]string, users ...oidctest.User) (*apptest.Server, *oidctest.Provider) {
	t.Helper()
	op := oidctest.Start(t, "agentline-test", "test-secret", users...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	vars := map[string]string{"AGENTLINE_PUBLIC_URL": "http://" + addr, "AGENTLINE_OIDC_ISSUER": op.URL,
		"AGENTLINE_OIDC_CLIENT_ID": op.ClientID, "AGENTLINE_OIDC_CLIENT_SECRET": op.ClientSecret,
		"AGENTLINE_OIDC_ALLOWED_DOMAINS": "example.com"}
	for k, v := range env {
		vars[k] = v
	}
	return apptest.StartAt(t, apptest.Config(t, storetest.URL(t, d), vars), addr), op
}

// ssoShots is where the journey's screenshots go: AGENTLINE_SSO_SHOTS, or
// as every browser test's.
func ssoShots(t *testing.T) string {
	if d := os.Getenv("AGENTLINE_SSO_SHOTS"); d != "" {
		return d
	}
	return screenshotDir(t)
}

// ssoSignIn goes from the console's sign-in page through the provider's
// page, as subject.
func ssoSignIn(c console, email string) {
	c.t.Helper()
	c.open("", 1000, 800)
	c.heading("Sign in to agentline")
	clickAcross(c, "Sign in with 127.0.0.1")
	across(c, "the provider's page", `document.title === "Test identity provider"`)
	clickAcross(c, email)
}

// across waits for expr to hold on a page reached by navigations
// (redirects through the provider), which destroy the page's context
// while a poll runs: errors on the way are retried, for 30 seconds.
func across(c console, what, expr string) {
	c.t.Helper()
	for i := 0; i < 300; i++ {
		if ok, err := chromedp.Run(c.ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("waiting for %s", what)
}

// clickAcross clicks the button or link whose text is text, on a page
// that navigations may still be replacing (retried as across does).
func clickAcross(c console, text string) {
	c.t.Helper()
	across(c, "the button "+text, `(b => !!b && (b.click(), true))([...document.querySelectorAll("button, a")].find(b => b.textContent.trim() === `+js(text)+`))`)
}

// signedInTo waits for the console's page title after the way back.
func signedInTo(c console, title string) {
	c.t.Helper()
	across(c, "the page "+title, `(h => !!h && h.textContent === `+js(title)+`)(document.querySelector("main h1"))`)
}

// refused waits for the refusal page and returns its sentence.
func refused(c console) string {
	c.t.Helper()
	across(c, "the refusal page", `document.title === "Sign-in refused · agentline"`)
	return eval[string](c.t, c.ctx, `document.querySelector("[role=alert]").textContent`)
}

// Single sign-on in Chromium through a real OpenID provider on loopback:
// discovery, the authorization code flow with PKCE, state and nonce, and
// the session handed to the console; a new identity joins through its
// pending invitation; a changed email still reaches the same account;
// each bad answer is refused with a page that says why.
func TestConsoleSingleSignOn(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) { testSingleSignOn(t, d) })
	}
}

func testSingleSignOn(t *testing.T, d store.Dialect) {
	ctx := newBrowser(t)
	shots := ssoShots(t)
	alice := oidctest.User{Subject: "sub-alice", Email: "alice@example.com", Name: "Alice", EmailVerified: true}
	s, op := startSSO(t, d, nil, alice,
		oidctest.User{Subject: "sub-eve", Email: "eve@example.com", EmailVerified: false},
		oidctest.User{Subject: "sub-mallory", Email: "mallory@elsewhere.org", EmailVerified: true})
	admin := s.Admin(t)
	var p struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/projects", admin, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/invites", admin, map[string]string{"email": alice.Email, "role": "editor"}, nil)

	// The whole dance: a new identity with a pending invitation.
	c := newConsole(t, ctx, s.URL)
	c.open("", 1000, 800)
	c.heading("Sign in to agentline")
	c.poll("the button", `[...document.querySelectorAll("a")].some(a => a.textContent === "Sign in with 127.0.0.1")`)
	c.shot(shots, "sso-sign-in-page.png")
	axe := axeSource(t)
	c.axeCheck(axe, "sign-in with single sign-on")
	clickAcross(c, "Sign in with 127.0.0.1")
	across(c, "the provider's page", `document.title === "Test identity provider"`)
	c.shot(shots, "sso-provider-page.png")
	clickAcross(c, alice.Email)
	signedInTo(c, "Agents")
	if strings.Contains(eval[string](t, ctx, `location.href`), "als_") {
		t.Error("the session token stayed in the location")
	}
	c.shot(shots, "sso-signed-in.png")
	c.noErrors("signed in")
	tok := eval[string](t, ctx, `sessionStorage.getItem("agentline.token")`)
	var me struct{ User agentline.User }
	s.Must(t, 200, "GET", "/api/me", tok, nil, &me)
	if me.User.Email != alice.Email {
		t.Fatalf("signed in as %+v", me.User)
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/agents", tok, nil, nil)

	// A replayed callback: its state is used up.
	if err := chromedp.Do(ctx, chromedp.Navigate(op.LastRedirect())); err != nil {
		t.Fatal(err)
	}
	if msg := refused(c); !strings.Contains(msg, "has been used already") {
		t.Errorf("replay: %q", msg)
	}
	c.shot(shots, "sso-refused-replay.png")
	c.axeCheck(axe, "refusal page")

	// The used code again, under a fresh state of this browser: the
	// provider refuses it.
	used, err := url.Parse(op.LastRedirect())
	if err != nil {
		t.Fatal(err)
	}
	eval[any](t, ctx, `sessionStorage.clear()`)
	c.open("", 1000, 800)
	clickAcross(c, "Sign in with 127.0.0.1")
	across(c, "the provider's page", `document.title === "Test identity provider"`)
	state := eval[string](t, ctx, `document.querySelector("input[name=state]").value`)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/api/auth/oidc/callback?"+url.Values{"code": {used.Query().Get("code")}, "state": {state}}.Encode())); err != nil {
		t.Fatal(err)
	}
	if msg := refused(c); !strings.Contains(msg, "did not accept this sign-in (invalid_grant)") {
		t.Errorf("replayed code: %q", msg)
	}
	c.shot(shots, "sso-refused-replayed-code.png")

	// A sign-in left at the provider past its 10 minutes: expired.
	eval[any](t, ctx, `sessionStorage.clear()`)
	c.open("", 1000, 800)
	clickAcross(c, "Sign in with 127.0.0.1")
	across(c, "the provider's page", `document.title === "Test identity provider"`)
	if err := s.App.Store.ExecAdmin(context.Background(), `UPDATE oidc_sign_ins SET expires_at = created_at`); err != nil {
		t.Fatal(err)
	}
	clickAcross(c, alice.Email)
	if msg := refused(c); !strings.Contains(msg, "This sign-in expired") {
		t.Errorf("expired: %q", msg)
	}
	c.shot(shots, "sso-refused-expired.png")

	// A changed email at the provider reaches the same account.
	eval[any](t, ctx, `sessionStorage.clear()`)
	op.SetUser(oidctest.User{Subject: alice.Subject, Email: "alice.smith@example.com", EmailVerified: true})
	ssoSignIn(c, "alice.smith@example.com")
	signedInTo(c, "Agents")
	tok2 := eval[string](t, ctx, `sessionStorage.getItem("agentline.token")`)
	var me2 struct{ User agentline.User }
	s.Must(t, 200, "GET", "/api/me", tok2, nil, &me2)
	if me2.User.ID != me.User.ID {
		t.Errorf("a changed email signed in as account %d, not %d", me2.User.ID, me.User.ID)
	}
	op.SetUser(alice)

	cases := []struct {
		name, email, want string
		tamper            oidctest.Tamper
	}{
		{"tampered", alice.Email, "could not be verified", oidctest.Tamper{WrongKey: true}},
		{"audience", alice.Email, "could not be verified", oidctest.Tamper{Audience: "someone-else"}},
		{"unverified", "eve@example.com", "has not verified the email address", oidctest.Tamper{}},
		{"domain", "mallory@elsewhere.org", "Accounts of elsewhere.org cannot sign in", oidctest.Tamper{}},
	}
	for _, tc := range cases {
		eval[any](t, ctx, `sessionStorage.clear()`)
		op.SetTamper(tc.tamper)
		ssoSignIn(c, tc.email)
		if msg := refused(c); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q", tc.name, msg)
		}
		c.shot(shots, "sso-refused-"+tc.name+".png")
		op.SetTamper(oidctest.Tamper{})
	}

	// A key rotation at the provider: the new key is fetched.
	op.Rotate(t)
	eval[any](t, ctx, `sessionStorage.clear()`)
	ssoSignIn(c, alice.Email)
	signedInTo(c, "Agents")

	// The instance's audit log has the sign-ins and the refusals.
	for action, atLeast := range map[string]int{"auth.sso_sign_in": 2, "auth.sso_sign_in_refused": len(cases)} {
		if n := len(instanceLog(t, s, action)); n < atLeast {
			t.Errorf("%d %s entries, want at least %d", n, action, atLeast)
		}
	}
}

// With AGENTLINE_OIDC_ONLY, passwords are refused to everyone but
// instance administrators, whose password sign-in is the break-glass.
func TestSSOOnlyRefusesPasswords(t *testing.T) {
	t.Parallel()
	s, _ := startSSO(t, store.SQLite, map[string]string{"AGENTLINE_OIDC_ONLY": "true"})
	admin := s.Admin(t) // the administrator still signs in with a password
	s.Must(t, 200, "GET", "/api/me", admin, nil, nil)
	bob, _ := s.App.Auth.CreateUser(context.Background(), "bob@example.com", "bob's password")
	r := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": bob.Email, "password": "bob's password"})
	if r.Status != 403 || !strings.Contains(r.String(), "Sign in with 127.0.0.1") {
		t.Fatalf("bob's password: %d %s", r.Status, r.String())
	}
	// The administrator's sign-in is logged as the break-glass it is, bob's
	// refusal as a refusal.
	if list := instanceLog(t, s, "auth.break_glass_sign_in"); len(list) != 1 || list[0].Actor.Email != apptest.AdminEmail {
		t.Errorf("break-glass entries: %+v", list)
	}
	if list := instanceLog(t, s, "auth.sign_in_refused"); len(list) != 1 || list[0].Actor.ID != bob.ID {
		t.Errorf("refusal entries: %+v", list)
	}
	var m struct {
		SSO struct {
			Name string `json:"name"`
			Only bool   `json:"only"`
		} `json:"sso"`
	}
	s.Must(t, 200, "GET", "/api/auth/methods", "", nil, &m)
	if m.SSO.Name != "127.0.0.1" || !m.SSO.Only {
		t.Errorf("methods: %+v", m)
	}
}
