package app_test

import (
	"fmt"
	"testing"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// With AGENTLINE_TRUSTED_PROXIES naming the proxy (here the test itself, on
// loopback), two visitors behind it have their own sign-in throttles; with
// the setting unset the header counts for nothing.
func TestTrustedProxiesSettingReachesTheEdge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		trusted     string
		otherStatus int
	}{
		{"127.0.0.1/32,::1", 401},
		{"", 429},
	} {
		t.Run(fmt.Sprintf("trusted=%q", tc.trusted), func(t *testing.T) {
			s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_TRUSTED_PROXIES": tc.trusted})
			login := func(client string, i int) int {
				req := s.Request(t, "POST", "/api/auth/login", "", map[string]string{"email": fmt.Sprintf("guess%d@example.com", i), "password": "wrong"})
				req.Header.Set("X-Forwarded-For", client)
				return s.Send(t, req).Status
			}
			for i := range 20 {
				if got := login("198.51.100.7", i); got != 401 {
					t.Fatalf("failure %d = %d", i+1, got)
				}
			}
			if got := login("198.51.100.7", 20); got != 429 {
				t.Fatalf("21st failure of the same visitor = %d, want 429", got)
			}
			if got := login("198.51.100.8", 21); got != tc.otherStatus {
				t.Fatalf("another visitor = %d, want %d", got, tc.otherStatus)
			}
		})
	}
}

// The form's per-client submit limit counts each visitor behind a trusted
// proxy on its own, and everyone behind an untrusted one as the proxy.
func TestFormSubmitsBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		trusted     string
		otherStatus int
	}{
		{"127.0.0.1/32,::1", 201},
		{"", 429},
	} {
		t.Run(fmt.Sprintf("trusted=%q", tc.trusted), func(t *testing.T) {
			s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_TRUSTED_PROXIES": tc.trusted, "AGENTLINE_FORM_SUBMITS_PER_MINUTE": "3"})
			_, tok := s.NewUser(t, "owner@example.com")
			var p, c struct{ ID int64 }
			s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
			s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "form", "name": "contact"}, &c)
			submit := func(client string) int {
				req := s.Request(t, "POST", "/api/channels/form/submit/"+itoa(c.ID), "", map[string]any{"name": "Ada", "email": "ada@example.com"})
				req.Header.Set("X-Forwarded-For", client)
				return s.Send(t, req).Status
			}
			for i := range 3 {
				if got := submit("198.51.100.7"); got != 201 {
					t.Fatalf("submit %d = %d", i+1, got)
				}
			}
			if got := submit("198.51.100.7"); got != 429 {
				t.Fatalf("4th submit of the same visitor = %d, want 429", got)
			}
			if got := submit("198.51.100.8"); got != tc.otherStatus {
				t.Fatalf("another visitor = %d, want %d", got, tc.otherStatus)
			}
		})
	}
}
