package app_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The console's page answers at / only: every other unknown path, under
// /api and /widget too, keeps the JSON 404.
func TestConsoleServedAtRoot(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, nil)
	tests := []struct {
		path   string
		status int
		ctype  string
	}{
		{"/", 200, "text/html; charset=utf-8"},
		{"/console/app.js", 200, "text/javascript; charset=utf-8"},
		{"/console/app.css", 200, "text/css; charset=utf-8"},
		{"/console/nope.js", 404, "application/json"},
		{"/index.html", 404, "application/json"},
		{"/api/nope", 404, "application/json"},
		{"/widget/v1/nope", 404, "application/json"},
		{"/agents", 404, "application/json"},
	}
	for _, tc := range tests {
		r := s.Do(t, "GET", tc.path, "", nil)
		if r.Status != tc.status || r.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, r.Status, r.Header.Get("Content-Type"), tc.status, tc.ctype)
		}
		if tc.status == 404 && r.ErrorCode() != "not_found" {
			t.Errorf("GET %s: %s", tc.path, r)
		}
	}
	if r := s.Do(t, "GET", "/", "", nil); !strings.Contains(string(r.Body), `src="/console/app.js"`) || !strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("console page: %s", r)
	}
	if r := s.Do(t, "POST", "/", "", nil); r.Status != 405 || r.Header.Get("Allow") != "GET" {
		t.Errorf("POST / = %s", r)
	}
}
