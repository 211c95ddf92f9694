package app_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Instance administrators: the first account is one; only they reach the
// admin API; they disable and enable accounts (a disabled account cannot
// sign in and its sessions end), make and unmake administrators (never the
// last one), and make reset links that work once and end the account's
// sessions.
func TestInstanceAdmins(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartFresh(t, d, nil)
			admin := s.Admin(t)
			var me struct {
				User     agentline.User `json:"user"`
				Features struct {
					MailEnabled bool `json:"mail_enabled"`
				} `json:"features"`
			}
			s.Must(t, 200, "GET", "/api/me", admin, nil, &me)
			if !me.User.Admin || me.Features.MailEnabled {
				t.Fatalf("/api/me of the first account = %+v", me)
			}
			ann, annTok := s.NewUser(t, "ann@example.com")
			s.Must(t, 200, "GET", "/api/me", annTok, nil, &me)
			if me.User.Admin {
				t.Fatal("a second account is an admin")
			}
			for _, r := range []struct{ method, path string }{{"GET", "/api/admin/users"}, {"PATCH", "/api/admin/users/1"},
				{"POST", "/api/admin/users/1/password-reset"}} {
				if got := s.Do(t, r.method, r.path, annTok, map[string]bool{"admin": true}); got.Status != 403 {
					t.Fatalf("%s %s by a non-admin = %s", r.method, r.path, got)
				}
			}
			var users []agentline.User
			s.Must(t, 200, "GET", "/api/admin/users", admin, nil, &users)
			if len(users) != 2 || !users[0].Admin || users[1].Email != ann.Email {
				t.Fatalf("users = %+v", users)
			}
			// The last admin stays.
			adminID := itoa(users[0].ID)
			for _, body := range []map[string]bool{{"admin": false}, {"disabled": true}} {
				if r := s.Do(t, "PATCH", "/api/admin/users/"+adminID, admin, body); r.Status != 409 {
					t.Fatalf("the last admin %v = %s", body, r)
				}
			}
			if r := s.Do(t, "PATCH", "/api/admin/users/"+adminID, admin, map[string]bool{}); r.Status != 400 {
				t.Fatalf("an empty change = %s", r)
			}
			// Disable: no sign-in, sessions end; enable again.
			s.Must(t, 200, "PATCH", "/api/admin/users/"+itoa(ann.ID), admin, map[string]bool{"disabled": true}, nil)
			if r := s.Do(t, "GET", "/api/me", annTok, nil); r.Status != 401 {
				t.Fatalf("a disabled account's session = %s", r)
			}
			if r := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": ann.Email, "password": apptest.Password}); r.Status != 403 ||
				!strings.Contains(string(r.Body), "disabled") {
				t.Fatalf("a disabled account signs in = %s", r)
			}
			if r := s.Do(t, "POST", "/api/admin/users/"+itoa(ann.ID)+"/password-reset", admin, nil); r.Status != 409 {
				t.Fatalf("a reset link for a disabled account = %s", r)
			}
			s.Must(t, 200, "PATCH", "/api/admin/users/"+itoa(ann.ID), admin, map[string]bool{"disabled": false}, nil)
			annTok = s.Login(t, ann.Email, apptest.Password)
			// A second admin; then the first may step down.
			s.Must(t, 200, "PATCH", "/api/admin/users/"+itoa(ann.ID), admin, map[string]bool{"admin": true}, nil)
			s.Must(t, 200, "GET", "/api/admin/users", annTok, nil, nil)
			s.Must(t, 200, "PATCH", "/api/admin/users/"+adminID, annTok, map[string]bool{"admin": false}, nil)
			if r := s.Do(t, "GET", "/api/admin/users", admin, nil); r.Status != 403 {
				t.Fatalf("a former admin lists users = %s", r)
			}
			// A reset link without mail: in the answer, once.
			var link agentline.PasswordReset
			s.Must(t, 201, "POST", "/api/admin/users/"+adminID+"/password-reset", annTok, nil, &link)
			if link.Delivery != agentline.DeliveryLink || !strings.HasPrefix(link.URL, "/#/reset/alr_") {
				t.Fatalf("reset link = %+v", link)
			}
			s.Must(t, 200, "POST", "/api/auth/reset-password", "", map[string]string{"token": link.Token, "password": "a fresh password"}, nil)
			if r := s.Do(t, "GET", "/api/me", admin, nil); r.Status != 401 {
				t.Fatalf("the session after a reset = %s", r)
			}
			s.Login(t, apptest.AdminEmail, "a fresh password")
			if r := s.Do(t, "POST", "/api/auth/reset-password", "", map[string]string{"token": link.Token, "password": "again and again"}); r.Status != 404 {
				t.Fatalf("a reset link used twice = %s", r)
			}
		})
	}
}

// Spraying: one password against 30 accounts from one client. Sign-in
// refuses with 429 and Retry-After once the per-client limit is reached,
// and the password change shares that limit. No answer of the member,
// invitation and reset routes differs between an existing and an unknown
// email.
func TestPasswordSprayingAndNoAccountOracle(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, "sqlite", nil)
	var tokens []string
	for i := range 30 {
		_, tok := s.NewUser(t, "user"+itoa(int64(i))+"@example.com")
		tokens = append(tokens, tok)
	}
	limited := -1
	for i := range 30 {
		r := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": "user" + itoa(int64(i)) + "@example.com", "password": "Summer2026!"})
		if r.Status == 429 {
			if r.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			limited = i
			break
		}
		if r.Status != 401 {
			t.Fatalf("attempt %d = %s", i, r)
		}
	}
	if limited != 20 {
		t.Fatalf("sign-in refused from attempt %d, want 20 (the per-client limit)", limited)
	}
	// The password change from the same client is refused too, for an
	// account that has not failed yet.
	if r := s.Do(t, "POST", "/api/me/password", tokens[29], map[string]string{"current_password": "Summer2026!", "new_password": "whatever it is"}); r.Status != 429 ||
		r.Header.Get("Retry-After") == "" {
		t.Fatalf("password change after spraying = %s", r)
	}

	// No oracle, on a fresh instance so the throttle is not in the way.
	s = apptest.StartFresh(t, "sqlite", nil)
	_, owner := s.NewUser(t, "owner@example.com")
	s.NewUser(t, "exists@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", owner, map[string]string{"name": "Acme"}, &p)
	base := "/api/projects/" + itoa(p.ID)
	scrub := func(r *apptest.Response, email string) string {
		b := linkToken.ReplaceAllString(string(r.Body), "TOKEN")
		b = strings.ReplaceAll(b, email, "EMAIL")
		return itoaPattern.ReplaceAllString(timePattern.ReplaceAllString(b, "TIME"), `"id":N`) + " " + itoa(int64(r.Status))
	}
	answers := map[string][2]string{}
	for i, email := range []string{"exists@example.com", "unknown@example.com"} {
		add := func(name string, r *apptest.Response) {
			a := answers[name]
			a[i] = scrub(r, email)
			answers[name] = a
		}
		add("member add", s.Do(t, "POST", base+"/members", owner, map[string]string{"email": email, "role": "viewer"}))
		var inv agentline.Invite
		r := s.Do(t, "POST", base+"/invites", owner, map[string]string{"email": email, "role": "viewer"})
		add("invitation create", r)
		r.JSON(t, &inv)
		add("invitation details", s.Do(t, "POST", "/api/invites/details", "", map[string]string{"token": inv.Token}))
		add("invitation accept", s.Do(t, "POST", "/api/invites/accept", "", map[string]string{"token": inv.Token, "password": "a new password"}))
		add("reset request", s.Do(t, "POST", "/api/auth/forgot-password", "", map[string]string{"email": email}))
		add("sign-in", s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": email, "password": "a wrong password"}))
	}
	for name, a := range answers {
		if a[0] != a[1] {
			t.Errorf("%s answers differ:\n existing: %s\n unknown:  %s", name, a[0], a[1])
		}
	}
}

var (
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z`)
	itoaPattern = regexp.MustCompile(`"id":\d+`)
)

// The password change alone, sprayed from one client over 30 stolen
// sessions with one guess each, is refused from the per-client limit on.
func TestPasswordChangeSprayingIsLimitedPerClient(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, "sqlite", nil)
	var tokens []string
	for i := range 30 {
		u, err := s.App.Auth.CreateUser(context.Background(), "user"+itoa(int64(i))+"@example.com", apptest.Password)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, s.Token(t, u.ID))
	}
	limited := -1
	for i, tok := range tokens {
		r := s.Do(t, "POST", "/api/me/password", tok, map[string]string{"current_password": "Summer2026!", "new_password": "whatever it is"})
		if r.Status == 429 && r.Header.Get("Retry-After") != "" {
			limited = i
			break
		}
		if r.Status != 400 {
			t.Fatalf("attempt %d = %s", i, r)
		}
	}
	if limited != 20 {
		t.Fatalf("password changes refused from attempt %d, want 20", limited)
	}
}
