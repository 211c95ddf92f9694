package app_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store/storetest"
)

// accountState is what must not move when someone else acts: the
// password hash, whether the account's session still works, its admin
// flag, and the projects it is a member of.
type accountState struct {
	hash     string
	session  int
	admin    bool
	projects string
}

func stateOf(t *testing.T, s *apptest.Server, email, token string) accountState {
	t.Helper()
	u, hash, err := s.App.Store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.App.Store.ProjectsForUser(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range ps {
		ids = append(ids, fmt.Sprintf("%d:%s", p.ID, p.Role))
	}
	return accountState{hash: hash, session: s.Do(t, "GET", "/api/me", token, nil).Status, admin: u.Admin, projects: strings.Join(ids, ",")}
}

// The chain the outside review found: a project owner adds an existing
// account as a member, makes a reset link for it and accepts it. It fails
// at every step now, for the instance's first account (an admin) too.
func TestTakeoverChainFails(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartFresh(t, d, nil)
			ownerTok := s.Admin(t)
			before := stateOf(t, s, apptest.AdminEmail, ownerTok)
			_, mal := s.NewUser(t, "mallory@example.com")
			var p agentline.Project
			s.Must(t, 201, "POST", "/api/projects", mal, map[string]string{"name": "bait"}, &p)
			base := "/api/projects/" + itoa(p.ID)

			// Adding the owner makes an invitation, no membership.
			s.Must(t, 202, "POST", base+"/members", mal, map[string]string{"email": apptest.AdminEmail, "role": "viewer"}, nil)
			if r := s.Do(t, "POST", base+"/invites", mal, map[string]string{"kind": "reset", "email": apptest.AdminEmail}); r.Status != 400 {
				t.Fatalf("a project reset link = %s", r)
			}
			// Mallory holds the invitation's token (no mail here) and
			// accepts it with a password of her choosing: nothing changes.
			var inv agentline.Invite
			s.Must(t, 201, "POST", base+"/invites", mal, map[string]string{"email": apptest.AdminEmail, "role": "owner"}, &inv)
			s.Must(t, 202, "POST", "/api/invites/accept", "", map[string]string{"token": inv.Token, "password": "pwned-by-mallory"}, nil)
			if r := s.Do(t, "POST", "/api/invites/accept", mal, map[string]string{"token": inv.Token}); r.Status != 403 {
				t.Fatalf("mallory accepts the owner's invitation signed in as herself = %s", r)
			}
			if r := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": apptest.AdminEmail, "password": "pwned-by-mallory"}); r.Status != 401 {
				t.Fatalf("sign-in with mallory's password = %s", r)
			}
			if after := stateOf(t, s, apptest.AdminEmail, ownerTok); after != before {
				t.Fatalf("the owner's account moved: %+v -> %+v", before, after)
			}
		})
	}
}

// A stolen session token cannot set a new password: the password change
// wants the current one, and there is no other way for a session to set
// its own password.
func TestStolenSessionCannotSetAPassword(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, "sqlite", nil)
	victim, stolen := s.NewUser(t, "victim@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", stolen, map[string]string{"name": "thief's"}, &p)
	before := stateOf(t, s, victim.Email, stolen)
	if r := s.Do(t, "POST", "/api/projects/"+itoa(p.ID)+"/invites", stolen, map[string]string{"kind": "reset", "email": victim.Email}); r.Status != 400 {
		t.Fatalf("a reset link for one's own email from a project = %s", r)
	}
	if r := s.Do(t, "POST", "/api/me/password", stolen, map[string]string{"current_password": "a guess", "new_password": "thief's password"}); r.Status != 400 {
		t.Fatalf("a password change without the current password = %s", r)
	}
	if r := s.Do(t, "POST", "/api/admin/users/"+itoa(victim.ID)+"/password-reset", stolen, nil); r.Status != 403 {
		t.Fatalf("an admin reset link from a non-admin = %s", r)
	}
	if r := s.Do(t, "POST", "/api/auth/forgot-password", stolen, map[string]string{"email": victim.Email}); r.Status != 503 {
		t.Fatalf("forgot password without mail = %s", r)
	}
	if after := stateOf(t, s, victim.Email, stolen); after != before {
		t.Fatalf("the account moved: %+v -> %+v", before, after)
	}
}

var linkToken = regexp.MustCompile(`al[ir]_[A-Za-z0-9_-]{43}`)

// Every route of the route table, called by the owner of another project
// with every body that names the target account (as an email, a user id,
// a role, a reset, a password), and every link token any answer holds then
// accepted or used: the target's password, sessions, admin flag and
// memberships stay as they were. Targets: the instance's first account
// (an administrator) and a plain account.
func TestNoRouteLetsOneAccountChangeAnother(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, "sqlite", nil)
	adminTok := s.Admin(t)
	plain, plainTok := s.NewUser(t, "plain@example.com")
	admin, _, _ := s.App.Store.UserByEmail(context.Background(), apptest.AdminEmail)
	_, mal := s.NewUser(t, "mallory@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", mal, map[string]string{"name": "bait"}, &p)
	var inv agentline.Invite
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/invites", mal, map[string]string{"email": "someone@example.com", "role": "viewer"}, &inv)

	targets := []struct {
		user  agentline.User
		token string
	}{{admin, adminTok}, {plain, plainTok}}
	var before []accountState
	for _, tg := range targets {
		before = append(before, stateOf(t, s, tg.user.Email, tg.token))
	}
	const pw = "pwned-by-mallory"
	bodies := func(tg agentline.User) []any {
		return []any{nil, map[string]any{},
			map[string]any{"email": tg.Email, "role": "owner"},
			map[string]any{"kind": "reset", "email": tg.Email},
			map[string]any{"email": tg.Email},
			map[string]any{"role": "owner"},
			map[string]any{"admin": false, "disabled": true},
			map[string]any{"user_id": tg.ID, "role": "owner"},
			map[string]any{"current_password": pw, "new_password": pw},
			map[string]any{"email": tg.Email, "password": pw},
		}
	}
	tokens := map[string]bool{inv.Token: true}
	requests := 0
	for _, route := range s.App.Routes() {
		method, pattern, _ := strings.Cut(route, " ")
		if strings.Contains(pattern, "/stream/") || strings.HasPrefix(pattern, "/sandbox") ||
			route == "DELETE /api/projects/{project_id}" || route == "POST /api/auth/logout" {
			continue // WebSocket upgrades, the pretend provider; Mallory's project and session stay for the routes after them
		}
		for _, tg := range targets {
			for _, path := range fillForTarget(pattern, p.ID, inv.ID, tg.user.ID) {
				for _, body := range bodies(tg.user) {
					for _, tok := range []string{mal, ""} {
						r := s.Do(t, method, path, tok, body)
						requests++
						for _, m := range linkToken.FindAllString(string(r.Body), -1) {
							tokens[m] = true
						}
					}
				}
			}
		}
	}
	for tok := range tokens {
		s.Do(t, "POST", "/api/invites/accept", "", map[string]string{"token": tok, "password": pw})
		s.Do(t, "POST", "/api/invites/accept", mal, map[string]string{"token": tok})
		s.Do(t, "POST", "/api/auth/reset-password", "", map[string]string{"token": tok, "password": pw})
		requests += 3
	}
	// The attack really ran: Mallory stayed signed in, and her invitations
	// for the targets' emails gave her tokens to try.
	s.Must(t, 200, "GET", "/api/me", mal, nil, nil)
	if len(tokens) < 3 {
		t.Fatalf("only %d link tokens were tried", len(tokens))
	}
	for i, tg := range targets {
		if after := stateOf(t, s, tg.user.Email, tg.token); after != before[i] {
			t.Errorf("%s moved: %+v -> %+v", tg.user.Email, before[i], after)
		}
	}
	t.Logf("%d requests over %d routes, %d link tokens tried", requests, len(s.App.Routes()), len(tokens))
}

// fillForTarget fills a route pattern's ids: the attacker's project and
// invitation, and for every other id both the target's user id and 1.
func fillForTarget(pattern string, projectID, inviteID, targetID int64) []string {
	var out []string
	for _, other := range []int64{targetID, 1} {
		out = append(out, paramPattern.ReplaceAllStringFunc(pattern, func(m string) string {
			switch m {
			case "{project_id}":
				return itoa(projectID)
			case "{invite_id}":
				return itoa(inviteID)
			}
			return itoa(other)
		}))
	}
	return out
}
