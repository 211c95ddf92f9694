package form_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store/storetest"
)

// With PostgreSQL down, every way into a form answers 503 and stores
// nothing: JSON clients (and the page's script) get 503 unavailable with
// Retry-After, a browser posting the page natively and the page itself get
// a short HTML page saying so, never JSON or a 500. When PostgreSQL is
// back, the same server takes submissions again, and only the lead (and
// live chat session) from before the outage is there.
func TestSubmitWithTheDatabaseDown(t *testing.T) {
	pg := storetest.NewCluster(t)
	f := fixture{s: apptest.Start(t, apptest.Config(t, pg.URL(t), nil))}
	_, f.tok = f.s.NewUser(t, "owner@example.com")
	f.s.Must(t, 201, "POST", "/api/projects", f.tok, map[string]string{"name": "Acme"}, &f.project)
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project.ID)+"/agents", f.tok, map[string]string{"name": "Ada"}, &f.agent)
	capture := f.formChannel(t, contactForm, false)
	chat := f.formChannel(t, map[string]any{"mode": "live_chat"}, true)
	person := map[string]any{"name": "Ada Lovelace", "email": "ada@example.com"}
	var before struct {
		LeadID    int64  `json:"lead_id"`
		SessionID string `json:"session_id"`
	}
	f.s.Must(t, 201, "POST", submitPath(chat), "", person, &before)

	pg.Stop()
	native := url.Values{"name": {"Bo"}, "email": {"bo@example.com"}, "topic": {"Sales"}, "consent": {"on"}}.Encode()
	cases := []struct {
		name, method, path, contentType, accept string
		body                                    any
		want                                    string // in the body
	}{
		{"JSON lead capture", "POST", submitPath(capture), "application/json", "", good, `"code":"unavailable"`},
		{"JSON live chat", "POST", submitPath(chat), "application/json", "application/json", person, `"code":"unavailable"`},
		{"form-encoded, no HTML", "POST", submitPath(capture), "application/x-www-form-urlencoded", "", native, `"code":"unavailable"`},
		{"native POST of the page", "POST", submitPath(capture), "application/x-www-form-urlencoded", "text/html,application/xhtml+xml,*/*;q=0.8", native,
			"The form could not be sent right now, and nothing was saved. Please go back and send it again in a minute."},
		{"native POST, live chat", "POST", submitPath(chat), "application/x-www-form-urlencoded", "text/html", "name=Bo&email=bo%40example.com",
			"nothing was saved"},
		{"the page", "GET", "/api/channels/form/embed/" + itoa(capture.ID), "", "text/html", nil, "The form is unavailable right now."},
	}
	for _, c := range cases {
		req := f.s.Request(t, c.method, c.path, "", c.body)
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		start := time.Now()
		r := f.s.Send(t, req)
		took := time.Since(start)
		html := strings.HasPrefix(c.want, "The") || c.want == "nothing was saved"
		ct := r.Header.Get("Content-Type")
		switch {
		case r.Status != 503 || !strings.Contains(string(r.Body), c.want):
			t.Errorf("%s: %d %s, want 503 with %q", c.name, r.Status, r.Body, c.want)
		case r.Header.Get("Retry-After") != "5":
			t.Errorf("%s: Retry-After %q, want 5", c.name, r.Header.Get("Retry-After"))
		case html && (!strings.HasPrefix(ct, "text/html") || strings.Contains(string(r.Body), "database")):
			t.Errorf("%s: %s %s, want an HTML page without internals", c.name, ct, r.Body)
		case !html && ct != "application/json":
			t.Errorf("%s: Content-Type %s, want JSON", c.name, ct)
		case took > 5*time.Second: // a refused connection is known at once
			t.Errorf("%s: answered in %v", c.name, took)
		}
	}

	pg.Start(t)
	deadline := time.Now().Add(30 * time.Second)
	for f.s.Do(t, "GET", "/readyz", "", nil).Status != 200 {
		if time.Now().After(deadline) {
			t.Fatal("not ready 30 s after PostgreSQL was back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var list struct{ Leads []agentline.Lead }
	f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads", f.tok, nil, &list)
	if len(list.Leads) != 1 || list.Leads[0].ID != before.LeadID {
		t.Fatalf("leads after the outage = %+v, want only lead %d", list.Leads, before.LeadID)
	}
	var sessions struct{ Sessions []struct{ ID string } }
	f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/sessions", f.tok, nil, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].ID != before.SessionID {
		t.Fatalf("sessions after the outage = %+v, want only %s", sessions.Sessions, before.SessionID)
	}
	f.s.Must(t, 201, "POST", submitPath(capture), "", good, nil)
}
