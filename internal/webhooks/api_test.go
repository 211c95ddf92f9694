package webhooks_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/store"
)

// Bad input is a 400 naming the field; the secret is shown on creation
// only; another project's endpoint is not found; a viewer reads but does
// not change.
func TestEndpointsAPI(t *testing.T) {
	f := newFixture(t, store.SQLite, nil, []string{"*"})
	base := "/api/projects/" + itoa(f.project) + "/webhooks"
	bad := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{}, "url"},
		{map[string]any{"url": "ftp://example.com/x"}, "url"},
		{map[string]any{"url": "hooks.example.com"}, "url"},
		{map[string]any{"url": "https://user:pw@example.com/x"}, "url"},
		{map[string]any{"url": "https://example.com/x", "events": []string{}}, "events"},
		{map[string]any{"url": "https://example.com/x", "events": []string{"lead.deleted"}}, "events"},
		{map[string]any{"url": "https://example.com/x", "events": []string{"*", "lead.created"}}, "events"},
		{map[string]any{"url": "https://example.com/x", "description": strings.Repeat("x", 501)}, "description"},
	}
	for _, c := range bad {
		r := f.s.Do(t, "POST", base, f.tok, c.body)
		// The body, not r.String(): a message listing the event types
		// is longer than what String shows.
		if r.Status != 400 || !strings.Contains(string(r.Body), `"field":"`+c.field+`"`) {
			t.Errorf("POST %v = %s, want 400 naming %s", c.body, r, c.field)
		}
	}
	if r := f.s.Do(t, "GET", "/api/webhooks/"+itoa(f.hook.ID), f.tok, nil); r.Status != 200 || strings.Contains(r.String(), "whsec_") {
		t.Errorf("GET shows %s", r)
	}
	if r := f.s.Do(t, "GET", base, f.tok, nil); r.Status != 200 || strings.Contains(r.String(), "whsec_") {
		t.Errorf("list shows %s", r)
	}
	var patched struct {
		Events  []string `json:"events"`
		Enabled bool     `json:"enabled"`
	}
	f.s.Must(t, 200, "PATCH", "/api/webhooks/"+itoa(f.hook.ID), f.tok, map[string]any{"events": []string{"lead.created", "lead.created"}, "enabled": false}, &patched)
	if len(patched.Events) != 1 || patched.Enabled {
		t.Errorf("patched %+v", patched)
	}

	// Another tenant.
	_, other := f.s.NewUser(t, "other@example.com")
	for _, probe := range [][2]string{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}, {"POST", "/test"}, {"POST", "/rotate-secret"}, {"GET", "/deliveries"}} {
		r := f.s.Do(t, probe[0], "/api/webhooks/"+itoa(f.hook.ID)+probe[1], other, map[string]any{})
		if r.Status != 404 {
			t.Errorf("another tenant's %s %s = %s, want 404", probe[0], probe[1], r)
		}
	}
	if r := f.s.Do(t, "GET", base, other, nil); r.Status != 404 {
		t.Errorf("another tenant lists: %s", r)
	}
	f.s.Must(t, 204, "DELETE", "/api/webhooks/"+itoa(f.hook.ID), f.tok, nil, nil)
	if r := f.s.Do(t, "GET", "/api/webhooks/"+itoa(f.hook.ID), f.tok, nil); r.Status != 404 {
		t.Errorf("after delete: %s", r)
	}
}
