package app_test

import (
	"context"
	"encoding/csv"
	"net/url"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// instanceLog is the instance's audit entries of action, newest first.
func instanceLog(t *testing.T, s *apptest.Server, action string) []agentline.AuditEntry {
	t.Helper()
	list, err := s.App.Store.AuditLog(context.Background(), agentline.AuditFilter{Action: action})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// Sign-ins are the instance's entries: who signed in, from where; a failed
// one keeps the email tried and is the same entry whether or not an
// account has it; a password set by a reset link and an invitation
// accepted by a new account name that person as the actor.
func TestAuditSignIns(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		ada, tok := s.NewUser(t, "ada@example.com")
		signIns := instanceLog(t, s, "auth.sign_in")
		if len(signIns) == 0 || signIns[0].Actor != (agentline.Actor{Kind: agentline.ActorUser, ID: ada.ID, Email: ada.Email}) ||
			signIns[0].ClientIP == "" || signIns[0].RequestID == "" || signIns[0].Resource.ID != itoa(ada.ID) {
			t.Fatalf("sign-in entries: %+v", signIns)
		}
		known := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": "ada@example.com", "password": "wrong"})
		unknown := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": "nobody@example.com", "password": "wrong"})
		if known.Status != 401 || unknown.Status != 401 || string(known.Body) != string(unknown.Body) {
			t.Fatalf("failed sign-ins answer %s and %s", known, unknown)
		}
		failed := instanceLog(t, s, "auth.sign_in_failed")
		if len(failed) != 2 {
			t.Fatalf("failed sign-in entries: %+v", failed)
		}
		for i, email := range []string{"nobody@example.com", "ada@example.com"} {
			e := failed[i]
			if e.Actor != (agentline.Actor{Kind: agentline.ActorUser, Email: email}) || e.Resource != (agentline.AuditResource{Kind: "user"}) ||
				e.ProjectID != 0 || e.Changes != nil || e.ClientIP == "" {
				t.Errorf("failed sign-in of %s: %+v", email, e)
			}
		}
		// Owners of a project see none of it; administrators do.
		var p agentline.Project
		s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
		var page struct{ Entries []agentline.AuditEntry }
		s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/audit-log", tok, nil, &page)
		for _, e := range page.Entries {
			if strings.HasPrefix(e.Action, "auth.") {
				t.Errorf("a sign-in in the project's log: %+v", e)
			}
		}
		admin := s.Admin(t)
		s.Must(t, 200, "GET", "/api/admin/audit-log?action=auth.sign_in_failed&actor=nobody@example.com", admin, nil, &page)
		if len(page.Entries) != 1 {
			t.Errorf("the administrator's filtered log: %+v", page.Entries)
		}

		// A reset link made by an administrator, used by its owner.
		var link struct {
			Token string `json:"token"`
		}
		s.Must(t, 201, "POST", "/api/admin/users/"+itoa(ada.ID)+"/password-reset", admin, nil, &link)
		token := link.Token
		s.Must(t, 200, "POST", "/api/auth/reset-password", "", map[string]string{"token": token, "password": "a brand new password"}, nil)
		if list := instanceLog(t, s, "user.password_reset"); len(list) != 1 || list[0].Actor.ID != ada.ID || list[0].ClientIP == "" {
			t.Errorf("reset entries: %+v", list)
		}

		// An invitation accepted by a new account.
		tok = s.Login(t, "ada@example.com", "a brand new password")
		var inv agentline.Invite
		s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/invites", tok, map[string]string{"email": "new@example.com", "role": "editor"}, &inv)
		s.Must(t, 202, "POST", "/api/invites/accept", "", map[string]string{"token": inv.Token, "password": "the newcomer's password"}, nil)
		s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/audit-log?action=invite.accept", tok, nil, &page)
		if len(page.Entries) != 1 || page.Entries[0].Actor.Email != "new@example.com" || page.Entries[0].Changes["role"][1] != "editor" {
			t.Errorf("acceptance entries: %+v", page.Entries)
		}
	})
}

// A change made with an API key names the key, by its prefix, as the
// actor; a change that fails (its input refused, or its transaction
// rolled back on a conflict) writes nothing.
func TestAuditAPIKeyAndFailedChanges(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		o, tok := s.NewUser(t, "owner@example.com")
		var p agentline.Project
		var a agentline.Agent
		s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
		s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
		key := newKey(t, s, tok, p.ID, agentline.RoleOwner)
		if !strings.HasPrefix(key.Key, agentline.APIKeyPrefix) {
			t.Fatalf("key %q", key.Key)
		}
		s.Must(t, 200, "PATCH", "/api/agents/"+itoa(a.ID), key.Key, map[string]string{"name": "Ada 2"}, nil)
		log := "/api/projects/" + itoa(p.ID) + "/audit-log"
		var page struct{ Entries []agentline.AuditEntry }
		s.Must(t, 200, "GET", log+"?action=agent.update", tok, nil, &page)
		want := agentline.Actor{Kind: agentline.ActorAPIKey, ID: key.ID, KeyPrefix: key.Prefix}
		if len(page.Entries) != 1 || page.Entries[0].Actor != want || page.Entries[0].Changes["name"] != [2]any{"Ada", "Ada 2"} {
			t.Fatalf("entries: %+v, want one by %+v", page.Entries, want)
		}
		// An owner's key reads the log too, filtered by its own prefix.
		s.Must(t, 200, "GET", log+"?actor_kind=api_key&actor="+url.QueryEscape(key.Prefix), key.Key, nil, &page)
		if len(page.Entries) != 1 {
			t.Errorf("by the key's prefix: %+v", page.Entries)
		}

		s.Must(t, 200, "GET", log, tok, nil, &page)
		before := len(page.Entries)
		s.Must(t, 400, "PATCH", "/api/agents/"+itoa(a.ID), tok, map[string]any{"name": ""}, nil)
		tool := map[string]string{"name": "lookup", "url": "https://hooks.example.com/x", "method": "POST"}
		s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, tool, nil)
		s.Must(t, 409, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, tool, nil)
		s.Must(t, 409, "DELETE", "/api/projects/"+itoa(p.ID)+"/members/"+itoa(o.ID), tok, nil, nil)
		s.Must(t, 200, "GET", log, tok, nil, &page)
		if len(page.Entries) != before+1 || page.Entries[0].Action != "tool.create" {
			t.Errorf("after refused changes: %d entries (had %d), newest %+v", len(page.Entries), before, page.Entries[0])
		}

		// The CSV has the same entries, newest first, with a header.
		r := s.Must(t, 200, "GET", log+".csv?from=2000-01-01", tok, nil, nil)
		rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
		if err != nil || len(rows) != len(page.Entries)+1 || rows[0][5] != "action" || rows[1][5] != "tool.create" {
			t.Errorf("CSV (%v):\n%s", err, r.Body)
		}
		for _, bad := range []string{"actor_kind=robot", "actor_id=x", "from=yesterday", "to=2020-01-01&from=2021-01-01", "limit=0", "action=" + strings.Repeat("a", 400)} {
			if r := s.Do(t, "GET", log+"?"+bad, tok, nil); r.Status != 400 || r.ErrorCode() != agentline.EInvalid {
				t.Errorf("?%s = %s, want 400", bad, r)
			}
		}
	})
}
