package mail_test

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/mail"
	"github.com/agentline/agentline/internal/mail/mailtest"
)

func send(t *testing.T, cfg mail.Config, m mail.Message) error {
	t.Helper()
	s, err := mail.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestSendsThroughARealSMTPServer(t *testing.T) {
	cases := []struct {
		name     string
		opts     mailtest.Options
		wantTLS  bool
		wantUser string
	}{
		{"plain on loopback", mailtest.Options{}, false, ""},
		{"STARTTLS and AUTH PLAIN", mailtest.Options{TLS: true, User: "mailer", Password: "s3cret"}, true, "mailer"},
		{"AUTH PLAIN on loopback without TLS", mailtest.Options{User: "mailer", Password: "s3cret"}, false, "mailer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := mailtest.Start(t, c.opts)
			cfg := mail.Config{URL: srv.URL(), From: "agentline <noreply@example.com>"}
			if srv.RootCAs != nil {
				cfg.TLS = &tls.Config{RootCAs: srv.RootCAs}
			}
			err := send(t, cfg, mail.Message{To: "vera@example.com", Subject: "Join «Shop» on agentline",
				Text: "Hello,\nopen http://localhost:8080/#/invite/ali_abc to join.\n"})
			if err != nil {
				t.Fatal(err)
			}
			m := srv.Wait(t, 1, 5*time.Second)[0]
			if m.From != "noreply@example.com" || len(m.To) != 1 || m.To[0] != "vera@example.com" {
				t.Fatalf("envelope = %q -> %q", m.From, m.To)
			}
			if m.Subject != "Join «Shop» on agentline" || !strings.Contains(m.Text, "#/invite/ali_abc to join.") {
				t.Fatalf("subject %q, text %q", m.Subject, m.Text)
			}
			if m.TLS != c.wantTLS || m.User != c.wantUser {
				t.Fatalf("TLS %v user %q, want %v %q", m.TLS, m.User, c.wantTLS, c.wantUser)
			}
		})
	}
}

func TestWrongCredentialsFail(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Password: "right"})
	err := send(t, mail.Config{URL: "smtp://mailer:wrong@" + srv.Addr, From: "noreply@example.com"},
		mail.Message{To: "a@example.com", Subject: "x", Text: "y"})
	if err == nil || !strings.Contains(err.Error(), "AUTH") {
		t.Fatalf("err = %v, want an AUTH failure", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages arrived", n)
	}
}

func TestUntrustedCertificateFails(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{TLS: true})
	err := send(t, mail.Config{URL: srv.URL(), From: "noreply@example.com"}, mail.Message{To: "a@example.com", Subject: "x", Text: "y"})
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("err = %v, want STARTTLS to fail on an untrusted certificate", err)
	}
}

// A subject made of user input (a project's name) cannot add headers.
func TestSubjectCannotAddHeaders(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	err := send(t, mail.Config{URL: srv.URL(), From: "noreply@example.com"},
		mail.Message{To: "a@example.com", Subject: "Shop\r\nBcc: evil@example.com", Text: "body"})
	if err != nil {
		t.Fatal(err)
	}
	m := srv.Wait(t, 1, 5*time.Second)[0]
	if strings.Contains(strings.ToLower(string(m.Raw)), "\r\nbcc:") || len(m.To) != 1 {
		t.Fatalf("a header was injected:\n%s", m.Raw)
	}
}

func TestConfigErrorsNameTheSettings(t *testing.T) {
	for _, c := range []mail.Config{
		{URL: "http://mail.example.com", From: "a@example.com"},
		{URL: "smtp://", From: "a@example.com"},
		{URL: "smtp://mail.example.com", From: "not an address"},
	} {
		err := c.Check()
		if err == nil || !strings.Contains(err.Error(), "AGENTLINE_") {
			t.Errorf("%+v: err = %v, want one naming the setting", c, err)
		}
	}
	if err := (mail.Config{URL: "smtps://u:p@mail.example.com", From: "agentline <noreply@example.com>"}).Check(); err != nil {
		t.Fatal(err)
	}
}
