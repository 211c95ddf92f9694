package app_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Changing one's password: the current one is checked, the new one works,
// the old one no longer does, and the user's other sessions end while the
// one that changed it stays.
func TestChangePassword(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartFresh(t, d, nil)
			_, tok := s.NewUser(t, "ann@example.com")
			other := s.Login(t, "ann@example.com", apptest.Password)
			_, bobTok := s.NewUser(t, "bob@example.com")

			if r := s.Do(t, "POST", "/api/me/password", tok, map[string]string{"current_password": "wrong password", "new_password": "a new password"}); r.Status != 400 || !strings.Contains(string(r.Body), `"field":"current_password"`) {
				t.Fatalf("wrong current password = %s", r)
			}
			if r := s.Do(t, "POST", "/api/me/password", tok, map[string]string{"current_password": apptest.Password, "new_password": "short"}); r.Status != 400 || !strings.Contains(string(r.Body), `"field":"new_password"`) {
				t.Fatalf("short new password = %s", r)
			}
			if r := s.Do(t, "POST", "/api/me/password", "", map[string]string{"current_password": apptest.Password, "new_password": "a new password"}); r.Status != 401 {
				t.Fatalf("without a session = %s", r)
			}
			s.Must(t, 204, "POST", "/api/me/password", tok, map[string]string{"current_password": apptest.Password, "new_password": "a new password"}, nil)

			s.Must(t, 200, "GET", "/api/me", tok, nil, nil)
			if r := s.Do(t, "GET", "/api/me", other, nil); r.Status != 401 {
				t.Fatalf("the other session after the change = %s", r)
			}
			s.Must(t, 200, "GET", "/api/me", bobTok, nil, nil) // another user's session stays
			if r := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": "ann@example.com", "password": apptest.Password}); r.Status != 401 {
				t.Fatalf("the old password = %s", r)
			}
			s.Login(t, "ann@example.com", "a new password")
		})
	}
}

// Invites: only owners make, list and withdraw them; the token is shown
// once (no mail here) and stored hashed; an invitation works once and not
// after it expires, is withdrawn, or its inviter loses the right to
// invite; a new email's account is created on accepting; an existing
// account joins only signed in, and a signed-out accept for it changes
// nothing and answers exactly as for a new email.
func TestInvites(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartFresh(t, d, nil)
			ownerUser, owner := s.NewUser(t, "owner@example.com")
			_, editorTok := s.NewUser(t, "ed@example.com")
			var p agentline.Project
			s.Must(t, 201, "POST", "/api/projects", owner, map[string]any{"name": "Acme"}, &p)
			s.Join(t, owner, p.ID, editorTok, "ed@example.com", agentline.RoleEditor)
			invites := "/api/projects/" + itoa(p.ID) + "/invites"

			if r := s.Do(t, "POST", invites, editorTok, map[string]string{"email": "new@example.com", "role": "viewer"}); r.Status != 403 {
				t.Fatalf("an editor invites = %s", r)
			}
			if r := s.Do(t, "GET", invites, editorTok, nil); r.Status != 403 {
				t.Fatalf("an editor lists invites = %s", r)
			}
			for _, bad := range []map[string]string{{"email": "new@example.com", "role": "admin"}, {"email": "not an email", "role": "viewer"},
				{"email": "new@example.com", "role": "viewer", "kind": "other"}} {
				if r := s.Do(t, "POST", invites, owner, bad); r.Status != 400 {
					t.Fatalf("invite %v = %s", bad, r)
				}
			}
			// Resets are no project's business.
			if r := s.Do(t, "POST", invites, owner, map[string]string{"email": "ed@example.com", "kind": "reset"}); r.Status != 400 ||
				!strings.Contains(string(r.Body), "administrator") {
				t.Fatalf("a reset link from a project = %s", r)
			}

			var inv agentline.Invite
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": "New@Example.com", "role": "viewer"}, &inv)
			if !strings.HasPrefix(inv.Token, "ali_") || inv.URL != "/#/invite/"+inv.Token || inv.Email != "new@example.com" ||
				inv.Kind != agentline.InviteJoin || inv.Delivery != agentline.DeliveryLink {
				t.Fatalf("invite = %+v", inv)
			}
			var list []map[string]any
			s.Must(t, 200, "GET", invites, owner, nil, &list)
			if len(list) != 1 || list[0]["token"] != nil || list[0]["email"] != "new@example.com" {
				t.Fatalf("invites = %v", list)
			}
			if _, err := s.App.Store.InviteByTokenHash(context.Background(), inv.Token); err == nil {
				t.Fatal("the raw token finds the invite: tokens must be stored hashed")
			}
			var details agentline.InviteDetails
			s.Must(t, 200, "POST", "/api/invites/details", "", map[string]string{"token": inv.Token}, &details)
			if details.ProjectName != "Acme" || details.Role != agentline.RoleViewer || details.InvitedBy != ownerUser.Email || details.Email != "new@example.com" {
				t.Fatalf("details = %+v", details)
			}
			_, strangerTok := s.NewUser(t, "stranger@example.com")
			if r := s.Do(t, "DELETE", "/api/invites/"+itoa(inv.ID), editorTok, nil); r.Status != 403 {
				t.Fatalf("an editor withdraws = %s", r)
			}
			if r := s.Do(t, "DELETE", "/api/invites/"+itoa(inv.ID), strangerTok, nil); r.Status != 404 {
				t.Fatalf("another tenant withdraws = %s", r)
			}

			accept := func(token, password string) *apptest.Response {
				return s.Do(t, "POST", "/api/invites/accept", "", map[string]string{"token": token, "password": password})
			}
			if r := accept(inv.Token, "short"); r.Status != 400 {
				t.Fatalf("accept with a short password = %s", r)
			}
			if r := accept("ali_nope", "a good password"); r.Status != 404 {
				t.Fatalf("accept an unknown token = %s", r)
			}
			newAnswer := accept(inv.Token, "a good password")
			if newAnswer.Status != 202 {
				t.Fatalf("accept = %s", newAnswer)
			}
			if r := accept(inv.Token, "a good password"); r.Status != 404 {
				t.Fatalf("accept twice = %s", r)
			}
			newTok := s.Login(t, "new@example.com", "a good password")
			var got agentline.Project
			s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID), newTok, nil, &got)
			if got.Role != agentline.RoleViewer {
				t.Fatalf("the invitee's role = %q", got.Role)
			}

			// An existing account: signed out, nothing changes, and the
			// answer is the new email's to the byte (but for the email).
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": "stranger@example.com", "role": "editor"}, &inv)
			hashBefore := passwordHash(t, s, "stranger@example.com")
			existing := accept(inv.Token, "a good password")
			if existing.Status != newAnswer.Status ||
				strings.ReplaceAll(string(existing.Body), "stranger@example.com", "new@example.com") != string(newAnswer.Body) {
				t.Fatalf("signed-out accept for an existing account = %s, for a new one %s", existing, newAnswer)
			}
			if passwordHash(t, s, "stranger@example.com") != hashBefore {
				t.Fatal("a signed-out accept changed an existing account's password")
			}
			if r := s.Do(t, "GET", "/api/projects/"+itoa(p.ID), strangerTok, nil); r.Status != 404 {
				t.Fatalf("the account joined without signing in: %s", r)
			}
			// Signed in as someone else: refused; as the invitee: joined.
			if r := s.Do(t, "POST", "/api/invites/accept", newTok, map[string]string{"token": inv.Token}); r.Status != 403 {
				t.Fatalf("accept as another account = %s", r)
			}
			s.Must(t, 200, "POST", "/api/invites/accept", strangerTok, map[string]string{"token": inv.Token}, nil)
			s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/agents", strangerTok, nil, nil)

			// Expired.
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": "late@example.com", "role": "editor"}, &inv)
			if err := s.App.Store.ExecAdmin(context.Background(), `UPDATE invites SET expires_at = created_at`); err != nil {
				t.Fatal(err)
			}
			if r := accept(inv.Token, "a good password"); r.Status != 404 {
				t.Fatalf("accept an expired invite = %s", r)
			}
			s.Must(t, 200, "GET", invites, owner, nil, &list)
			if len(list) != 0 {
				t.Fatalf("used and expired invites are listed: %v", list)
			}
			// Withdrawn.
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": "gone@example.com", "role": "editor"}, &inv)
			s.Must(t, 204, "DELETE", "/api/invites/"+itoa(inv.ID), owner, nil, nil)
			if r := accept(inv.Token, "a good password"); r.Status != 404 {
				t.Fatalf("accept a withdrawn invite = %s", r)
			}
		})
	}
}

// An invitation dies when its inviter loses the right to invite: demoted
// from owner, removed from the project, or disabled.
func TestInviteDiesWithTheInvitersRight(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, nil)
	admin := s.Admin(t)
	_, owner := s.NewUser(t, "owner@example.com")
	co, coTok := s.NewUser(t, "co@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", owner, map[string]any{"name": "Acme"}, &p)
	s.Join(t, owner, p.ID, coTok, co.Email, agentline.RoleOwner)
	members := "/api/projects/" + itoa(p.ID) + "/members/" + itoa(co.ID)
	for _, lose := range []struct {
		name       string
		take, give func()
	}{
		{"demoted", func() { s.Must(t, 200, "PATCH", members, owner, map[string]string{"role": "editor"}, nil) },
			func() { s.Must(t, 200, "PATCH", members, owner, map[string]string{"role": "owner"}, nil) }},
		{"disabled", func() {
			s.Must(t, 200, "PATCH", "/api/admin/users/"+itoa(co.ID), admin, map[string]bool{"disabled": true}, nil)
		},
			func() {
				s.Must(t, 200, "PATCH", "/api/admin/users/"+itoa(co.ID), admin, map[string]bool{"disabled": false}, nil)
				coTok = s.Login(t, co.Email, apptest.Password)
			}},
		{"removed", func() { s.Must(t, 204, "DELETE", members, owner, nil, nil) }, func() {}},
	} {
		t.Run(lose.name, func(t *testing.T) {
			var inv agentline.Invite
			s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/invites", coTok, map[string]string{"email": "x-" + lose.name + "@example.com", "role": "owner"}, &inv)
			lose.take()
			if r := s.Do(t, "POST", "/api/invites/details", "", map[string]string{"token": inv.Token}); r.Status != 404 {
				t.Fatalf("the invitation after its inviter was %s = %s", lose.name, r)
			}
			if r := s.Do(t, "POST", "/api/invites/accept", "", map[string]string{"token": inv.Token, "password": "a good password"}); r.Status != 404 {
				t.Fatalf("accepting it = %s", r)
			}
			lose.give()
		})
	}
}

func passwordHash(t *testing.T, s *apptest.Server, email string) string {
	t.Helper()
	_, h, err := s.App.Store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// An invite accepted by several requests at once is used by exactly one:
// one account, one membership.
func TestInviteIsUsedOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartFresh(t, d, nil)
			_, owner := s.NewUser(t, "owner@example.com")
			var p agentline.Project
			var inv agentline.Invite
			s.Must(t, 201, "POST", "/api/projects", owner, map[string]any{"name": "Acme"}, &p)
			s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/invites", owner, map[string]string{"email": "new@example.com", "role": "editor"}, &inv)
			var wg sync.WaitGroup
			statuses := make([]int, 8)
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = s.Do(t, "POST", "/api/invites/accept", "", map[string]string{"token": inv.Token, "password": "a good password"}).Status
				}()
			}
			wg.Wait()
			for _, st := range statuses {
				if st != 202 && st != 404 {
					t.Errorf("a concurrent accept = %d", st)
				}
			}
			var members []agentline.Member
			s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/members", owner, nil, &members)
			if len(members) != 2 || members[1].Email != "new@example.com" {
				t.Fatalf("members = %+v (statuses %v)", members, statuses)
			}
		})
	}
}
