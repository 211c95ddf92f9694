package app_test

import (
	"context"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/mail/mailtest"
	"github.com/agentline/agentline/internal/store/storetest"
)

func mailEnv(srv *mailtest.Server) map[string]string {
	return map[string]string{"AGENTLINE_SMTP_URL": srv.URL(), "AGENTLINE_MAIL_FROM": "agentline <noreply@example.com>"}
}

var (
	inviteLink = regexp.MustCompile(`http://\S+/#/invite/(ali_[A-Za-z0-9_-]{43})`)
	resetLink  = regexp.MustCompile(`http://\S+/#/reset/(alr_[A-Za-z0-9_-]{43})`)
)

func linkIn(t *testing.T, re *regexp.Regexp, m mailtest.Message) string {
	t.Helper()
	got := re.FindStringSubmatch(m.Text)
	if got == nil {
		t.Fatalf("no link in the mail to %v:\n%s", m.To, m.Text)
	}
	return got[1]
}

// jobsSettled waits until no job of kind is waiting or running, so that a
// mail that is not sent is known not to be coming.
func jobsSettled(t *testing.T, s *apptest.Server, kind string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		err := s.App.Store.JobPool().QueryRowContext(context.Background(),
			`SELECT count(*) FROM river_job WHERE kind = '`+kind+`' AND state NOT IN ('completed', 'discarded', 'cancelled')`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("jobs of kind %s still pending", kind)
}

// With mail: an invitation reaches the invitee only, by email; accepting
// it as a new person creates the account; one for an existing account is
// accepted only signed in; "Forgot password?" mails exactly one link to an
// existing account and none for an unknown email, with the same answer;
// every link works once, expires, and dies when the password changes.
func TestAccountMailFlows(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			srv := mailtest.Start(t, mailtest.Options{})
			s := apptest.StartFresh(t, d, mailEnv(srv))
			ownerUser, owner := s.NewUser(t, "owner@example.com")
			bob, bobTok := s.NewUser(t, "bob@example.com")
			var p agentline.Project
			s.Must(t, 201, "POST", "/api/projects", owner, map[string]string{"name": "Acme"}, &p)
			invites := "/api/projects/" + itoa(p.ID) + "/invites"

			// A new person: the answer carries no link; the mail does.
			var inv agentline.Invite
			r := s.Must(t, 201, "POST", invites, owner, map[string]string{"email": "vera@example.com", "role": "editor"}, &inv)
			if inv.Delivery != agentline.DeliveryEmail || inv.Token != "" || inv.URL != "" || strings.Contains(string(r.Body), "ali_") {
				t.Fatalf("the inviter's answer = %s", r)
			}
			m := srv.Wait(t, 1, 10*time.Second)[0]
			if len(m.To) != 1 || m.To[0] != "vera@example.com" || !strings.Contains(m.Subject, "Acme") || !strings.Contains(m.Text, ownerUser.Email) {
				t.Fatalf("invitation mail = %+v", m)
			}
			token := linkIn(t, inviteLink, m)
			if l := s.Must(t, 200, "GET", invites, owner, nil, nil); strings.Contains(string(l.Body), token) {
				t.Fatal("the invitations list shows the token")
			}
			s.Must(t, 202, "POST", "/api/invites/accept", "", map[string]string{"token": token, "password": "vera's password"}, nil)
			vera := s.Login(t, "vera@example.com", "vera's password")
			s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID), vera, nil, nil)
			if r := s.Do(t, "POST", "/api/invites/accept", "", map[string]string{"token": token, "password": "vera's password"}); r.Status != 404 {
				t.Fatalf("the invitation used twice = %s", r)
			}

			// An existing account: only signed in.
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": bob.Email, "role": "viewer"}, nil)
			token = linkIn(t, inviteLink, srv.Wait(t, 2, 10*time.Second)[1])
			hash := passwordHash(t, s, bob.Email)
			s.Must(t, 202, "POST", "/api/invites/accept", "", map[string]string{"token": token, "password": "a squatter's password"}, nil)
			if passwordHash(t, s, bob.Email) != hash {
				t.Fatal("a signed-out accept changed bob's password")
			}
			if r := s.Do(t, "POST", "/api/invites/accept", vera, map[string]string{"token": token}); r.Status != 403 {
				t.Fatalf("vera accepts bob's invitation = %s", r)
			}
			s.Must(t, 200, "POST", "/api/invites/accept", bobTok, map[string]string{"token": token}, nil)
			s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID), bobTok, nil, nil)

			// Expired invitation.
			s.Must(t, 201, "POST", invites, owner, map[string]string{"email": "late@example.com", "role": "viewer"}, nil)
			token = linkIn(t, inviteLink, srv.Wait(t, 3, 10*time.Second)[2])
			if err := s.App.Store.ExecAdmin(context.Background(), `UPDATE invites SET expires_at = created_at`); err != nil {
				t.Fatal(err)
			}
			if r := s.Do(t, "POST", "/api/invites/accept", "", map[string]string{"token": token, "password": "a good password"}); r.Status != 404 {
				t.Fatalf("an expired invitation = %s", r)
			}

			// Forgot password: the same answer; one mail, to bob only.
			known := s.Must(t, 202, "POST", "/api/auth/forgot-password", "", map[string]string{"email": bob.Email}, nil)
			unknown := s.Must(t, 202, "POST", "/api/auth/forgot-password", "", map[string]string{"email": "nobody@example.com"}, nil)
			if string(known.Body) != string(unknown.Body) {
				t.Fatalf("answers differ: %s / %s", known, unknown)
			}
			jobsSettled(t, s, "send_password_reset")
			msgs := srv.Messages()
			if len(msgs) != 4 || msgs[3].To[0] != bob.Email {
				t.Fatalf("%d mails after two reset requests; the last to %v", len(msgs), msgs[len(msgs)-1].To)
			}
			first := linkIn(t, resetLink, msgs[3])
			s.Must(t, 202, "POST", "/api/auth/forgot-password", "", map[string]string{"email": bob.Email}, nil)
			second := linkIn(t, resetLink, srv.Wait(t, 5, 10*time.Second)[4])
			s.Must(t, 200, "POST", "/api/auth/reset-password", "", map[string]string{"token": first, "password": "bob's new password"}, nil)
			if r := s.Do(t, "GET", "/api/me", bobTok, nil); r.Status != 401 {
				t.Fatalf("bob's session after the reset = %s", r)
			}
			bobTok = s.Login(t, bob.Email, "bob's new password")
			for name, tok := range map[string]string{"used": first, "made before the change": second} {
				if r := s.Do(t, "POST", "/api/auth/reset-password", "", map[string]string{"token": tok, "password": "yet another one"}); r.Status != 404 {
					t.Fatalf("a reset link %s = %s", name, r)
				}
			}
			// A link dies when the password changes by the current one, and
			// when it expires.
			s.Must(t, 202, "POST", "/api/auth/forgot-password", "", map[string]string{"email": bob.Email}, nil)
			third := linkIn(t, resetLink, srv.Wait(t, 6, 10*time.Second)[5])
			s.Must(t, 204, "POST", "/api/me/password", bobTok, map[string]string{"current_password": "bob's new password", "new_password": "bob's third password"}, nil)
			if r := s.Do(t, "POST", "/api/auth/reset-password", "", map[string]string{"token": third, "password": "yet another one"}); r.Status != 404 {
				t.Fatalf("a reset link after a password change = %s", r)
			}
			// The admin's reset link goes by mail too.
			admin := s.Admin(t)
			var link agentline.PasswordReset
			s.Must(t, 202, "POST", "/api/admin/users/"+itoa(bob.ID)+"/password-reset", admin, nil, &link)
			m = srv.Wait(t, 7, 10*time.Second)[6]
			if link.Token != "" || m.To[0] != bob.Email || !strings.Contains(m.Text, "administrator") {
				t.Fatalf("admin reset: answer %+v, mail %+v", link, m)
			}
			expired := linkIn(t, resetLink, m)
			if err := s.App.Store.ExecAdmin(context.Background(), `UPDATE password_resets SET expires_at = created_at`); err != nil {
				t.Fatal(err)
			}
			if r := s.Do(t, "POST", "/api/auth/reset-password", "", map[string]string{"token": expired, "password": "yet another one"}); r.Status != 404 {
				t.Fatalf("an expired reset link = %s", r)
			}
		})
	}
}

// An invitation made while the mail server is down is mailed after a
// restart: the job that sends it is durable.
func TestInvitationMailSurvivesARestart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there yet
	env := map[string]string{"AGENTLINE_SMTP_URL": "smtp://" + addr, "AGENTLINE_MAIL_FROM": "noreply@example.com"}
	cfg := apptest.Config(t, storetest.URL(t, "sqlite"), env)
	s := apptest.Start(t, cfg)
	_, owner := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", owner, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/invites", owner, map[string]string{"email": "vera@example.com", "role": "viewer"}, nil)
	deadline := time.Now().Add(10 * time.Second)
	for attempts := 0; attempts == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the invitation's mail was never tried")
		}
		s.App.Store.JobPool().QueryRow(`SELECT coalesce(max(attempt), 0) FROM river_job WHERE kind = 'send_invitation'`).Scan(&attempts)
	}
	s.Stop(t)

	srv := mailtest.Start(t, mailtest.Options{Addr: addr})
	apptest.Start(t, cfg)
	m := srv.Wait(t, 1, 30*time.Second)[0]
	if m.To[0] != "vera@example.com" || inviteLink.FindString(m.Text) == "" {
		t.Fatalf("mail after the restart = %+v", m)
	}
}

// "Forgot password?" is limited per email (3 in 15 minutes) and per client
// (10), counting every request whatever the answer, with Retry-After.
func TestResetRequestsAreLimited(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, mailtest.Options{})
	s := apptest.StartFresh(t, "sqlite", mailEnv(srv))
	ask := func(email string) *apptest.Response {
		return s.Do(t, "POST", "/api/auth/forgot-password", "", map[string]string{"email": email})
	}
	for range 3 {
		s.Must(t, 202, "POST", "/api/auth/forgot-password", "", map[string]string{"email": "ann@example.com"}, nil)
	}
	if r := ask("ann@example.com"); r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a fourth request for one email = %s", r)
	}
	// The refused fourth is not counted: 3 + 7 make the client's 10.
	for i := range 7 {
		s.Must(t, 202, "POST", "/api/auth/forgot-password", "", map[string]string{"email": "other" + itoa(int64(i)) + "@example.com"}, nil)
	}
	if r := ask("someone-else@example.com"); r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("an eleventh request from one client = %s", r)
	}
	if r := ask("not an email"); r.Status != 400 {
		t.Fatalf("a malformed email = %s", r)
	}
}
