package app_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Changing one's password: the current one is checked, the new one works,
// the old one no longer does, and the user's other sessions end while the
// one that changed it stays.
func TestChangePassword(t *testing.T) {
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
// once and stored hashed; a link works once and not after it expires; an
// invite for a new email creates the account with the invited role, one
// for an existing account needs its password; another project's invite is
// not found; a reset link sets a member's password and ends their
// sessions.
func TestInvites(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s := apptest.StartFresh(t, d, nil)
			_, owner := s.NewUser(t, "owner@example.com")
			editor, editorTok := s.NewUser(t, "ed@example.com")
			var p, q agentline.Project
			s.Must(t, 201, "POST", "/api/projects", owner, map[string]any{"name": "Acme"}, &p)
			s.Must(t, 201, "POST", "/api/projects", editorTok, map[string]any{"name": "Other"}, &q)
			s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/members", owner, map[string]string{"email": "ed@example.com", "role": "editor"}, nil)
			invites := "/api/projects/" + itoa(p.ID) + "/invites"

			// Only owners.
			if r := s.Do(t, "POST", invites, editorTok, map[string]string{"email": "new@example.com", "role": "viewer"}); r.Status != 403 {
				t.Fatalf("an editor invites = %s", r)
			}
			if r := s.Do(t, "GET", invites, editorTok, nil); r.Status != 403 {
				t.Fatalf("an editor lists invites = %s", r)
			}
			for _, bad := range []map[string]string{{"email": "new@example.com", "role": "admin"}, {"email": "not an email", "role": "viewer"},
				{"email": "new@example.com", "role": "viewer", "kind": "other"}, {"email": "stranger@example.com", "kind": "reset"}} {
				if r := s.Do(t, "POST", invites, owner, bad); r.Status != 400 {
					t.Fatalf("invite %v = %s", bad, r)
				}
			}

			var inv agentline.Invite
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": "New@Example.com", "role": "viewer"}, &inv)
			if !strings.HasPrefix(inv.Token, "ali_") || inv.URL != "/#/invite/"+inv.Token || inv.Email != "new@example.com" || inv.Kind != agentline.InviteJoin {
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
			// Another project's owner gets not found.
			if r := s.Do(t, "DELETE", "/api/invites/"+itoa(inv.ID), editorTok, nil); r.Status != 403 {
				t.Fatalf("an editor withdraws = %s", r)
			}
			_, strangerTok := s.NewUser(t, "stranger@example.com")
			if r := s.Do(t, "DELETE", "/api/invites/"+itoa(inv.ID), strangerTok, nil); r.Status != 404 {
				t.Fatalf("another tenant withdraws = %s", r)
			}
			if r := s.Do(t, "GET", invites, strangerTok, nil); r.Status != 404 {
				t.Fatalf("another tenant lists = %s", r)
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
			if r := accept(inv.Token, "a good password"); r.Status != 200 {
				t.Fatalf("accept = %s", r)
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
			if r := s.Do(t, "POST", "/api/projects/"+itoa(p.ID)+"/agents", newTok, map[string]string{"name": "x"}); r.Status != 403 {
				t.Fatalf("the viewer creates = %s", r)
			}

			// An existing account needs its own password.
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": "stranger@example.com", "role": "editor"}, &inv)
			if r := accept(inv.Token, "not the password"); r.Status != 400 || !strings.Contains(string(r.Body), `"field":"password"`) {
				t.Fatalf("accept for an existing account with a wrong password = %s", r)
			}
			s.Must(t, 200, "POST", "/api/invites/accept", "", map[string]string{"token": inv.Token, "password": apptest.Password}, nil)
			s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/agents", strangerTok, nil, nil)

			// Expired: the store's clock is the real one, so the link is
			// made to have expired when it was made.
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

			// A reset link for a member.
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": editor.Email, "kind": "reset"}, &inv)
			if inv.Kind != agentline.InviteReset || inv.Role != agentline.RoleEditor {
				t.Fatalf("reset = %+v", inv)
			}
			s.Must(t, 200, "POST", "/api/invites/accept", "", map[string]string{"token": inv.Token, "password": "a reset password"}, nil)
			if r := s.Do(t, "GET", "/api/me", editorTok, nil); r.Status != 401 {
				t.Fatalf("the member's session after a reset = %s", r)
			}
			s.Login(t, editor.Email, "a reset password")
		})
	}
}

// An invite accepted by several requests at once is used by exactly one.
func TestInviteIsUsedOnceUnderConcurrency(t *testing.T) {
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
			ok := 0
			for _, st := range statuses {
				switch st {
				case 200:
					ok++
				case 404, 409:
				default:
					t.Errorf("a concurrent accept = %d", st)
				}
			}
			if ok != 1 {
				t.Fatalf("accepted %d times: %v", ok, statuses)
			}
		})
	}
}
