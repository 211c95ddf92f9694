package auth_test

import (
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Wrong current passwords count like failed sign-ins: after the email's
// limit, changing the password (and signing in) is refused until the
// window passes, so a stolen session is no way around the throttle.
func TestChangePasswordIsThrottled(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		s := newServer(t, db)
		s.mustUser(t, "ann@example.com", "s3cret-pass")
		token := s.login(t, "ann@example.com", "s3cret-pass").body["token"].(string)
		wrong := `{"current_password": "guess", "new_password": "a new password"}`
		for i := 0; i < 5; i++ {
			if a := s.do(t, "POST", "/api/me/password", token, wrong); a.status != 400 {
				t.Fatalf("wrong current password %d = %d %s", i, a.status, a.raw)
			}
		}
		right := `{"current_password": "s3cret-pass", "new_password": "a new password"}`
		if a := s.do(t, "POST", "/api/me/password", token, right); a.status != 429 || a.code() != agentline.ERateLimited {
			t.Fatalf("after 5 wrong passwords = %d %s", a.status, a.raw)
		}
		if a := s.login(t, "ann@example.com", "s3cret-pass"); a.status != 429 {
			t.Fatalf("sign-in after 5 wrong passwords = %d %s", a.status, a.raw)
		}
		s.clock.Add(16 * time.Minute)
		if a := s.do(t, "POST", "/api/me/password", token, right); a.status != 204 {
			t.Fatalf("after the window = %d %s", a.status, a.raw)
		}
	})
}
