package form_test

import (
	"encoding/csv"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// fixture is a server with a signed-in owner, a project and an agent.
type fixture struct {
	s       *apptest.Server
	tok     string
	project agentline.Project
	agent   agentline.Agent
}

func newFixture(t *testing.T, d store.Dialect, env map[string]string) fixture {
	t.Helper()
	f := fixture{s: apptest.StartFresh(t, d, env)}
	_, f.tok = f.s.NewUser(t, "owner@example.com")
	f.s.Must(t, 201, "POST", "/api/projects", f.tok, map[string]string{"name": "Acme"}, &f.project)
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project.ID)+"/agents", f.tok, map[string]string{"name": "Ada", "instructions": "You help Acme's customers."}, &f.agent)
	return f
}

// contactForm has one field of every type.
var contactForm = map[string]any{
	"fields": []map[string]any{
		{"name": "name", "label": "Name", "type": "text", "required": true},
		{"name": "email", "label": "Email", "type": "email", "required": true},
		{"name": "phone", "label": "Phone", "type": "tel"},
		{"name": "message", "label": "Message", "type": "textarea"},
		{"name": "topic", "label": "Topic", "type": "select", "options": []string{"Sales", "Support"}, "required": true},
		{"name": "consent", "label": "I agree to be contacted", "type": "checkbox", "required": true},
	},
	"thank_you_message": "Thanks, we will call you back.",
}

func (f fixture) formChannel(t *testing.T, form map[string]any, agent bool) agentline.Channel {
	t.Helper()
	body := map[string]any{"type": "form", "name": "Contact us", "settings": map[string]any{"form": form}}
	if agent {
		body["agent_id"] = f.agent.ID
	}
	var c agentline.Channel
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project.ID)+"/channels", f.tok, body, &c)
	return c
}

func submitPath(c agentline.Channel) string { return "/api/channels/form/submit/" + itoa(c.ID) }

var good = map[string]any{"name": "Ada Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0958",
	"message": "Call me\nafter 5", "topic": "Sales", "consent": true}

func with(change map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range good {
		out[k] = v
	}
	for k, v := range change {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// A lead capture form stores each submission, JSON or form-encoded, and the
// leads API lists, shows, exports and deletes them.
func TestLeadCapture(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) { testLeadCapture(t, d) })
	}
}

func testLeadCapture(t *testing.T, d store.Dialect) {
	f := newFixture(t, d, nil)
	c := f.formChannel(t, contactForm, false)
	if c.Settings.Form == nil || c.Settings.Form.Mode != agentline.FormLeadCapture || c.Settings.Form.SubmitLabel != "Send" {
		t.Fatalf("channel settings: %+v", c.Settings.Form)
	}
	var first struct {
		Mode      string  `json:"mode"`
		LeadID    int64   `json:"lead_id"`
		SessionID *string `json:"session_id"`
	}
	r := f.s.Must(t, 201, "POST", submitPath(c), "", good, &first)
	if first.Mode != "lead_capture" || first.LeadID == 0 || first.SessionID != nil {
		t.Fatalf("submit answer %s", r)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("RateLimit-Limit") != "10" {
		t.Errorf("headers %v", r.Header)
	}
	// Form-encoded, as a page's script or a plain client sends it.
	v := url.Values{"name": {"=HYPERLINK(\"http://evil\")"}, "email": {"bo@example.com"}, "topic": {"Support"}, "consent": {"on"}}
	req := f.s.Request(t, "POST", submitPath(c), "", v.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if r := f.s.Send(t, req); r.Status != 201 {
		t.Fatalf("form-encoded submit: %s", r)
	}

	var list struct {
		Leads      []agentline.Lead `json:"leads"`
		NextOffset *int             `json:"next_offset"`
	}
	f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads?limit=1", f.tok, nil, &list)
	if len(list.Leads) != 1 || list.NextOffset == nil || *list.NextOffset != 1 {
		t.Fatalf("first page: %+v", list)
	}
	f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads?channel_id="+itoa(c.ID)+"&from=2020-01-01", f.tok, nil, &list)
	if len(list.Leads) != 2 || list.NextOffset != nil {
		t.Fatalf("all: %+v", list)
	}
	f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads?to=2020-01-01", f.tok, nil, &list)
	if len(list.Leads) != 0 {
		t.Fatalf("before 2020: %+v", list)
	}
	if r := f.s.Do(t, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads?from=yesterday", f.tok, nil); r.Status != 400 || !strings.Contains(string(r.Body), `"field":"from"`) {
		t.Errorf("bad from: %s", r)
	}

	var lead struct {
		agentline.Lead
		Session json.RawMessage `json:"session"`
	}
	f.s.Must(t, 200, "GET", "/api/leads/"+itoa(first.LeadID), f.tok, nil, &lead)
	if lead.Answers["email"] != "ada@example.com" || lead.Answers["consent"] != true || lead.Answers["message"] != "Call me\nafter 5" ||
		lead.ChannelID != c.ID || lead.ProjectID != f.project.ID || string(lead.Session) != "null" {
		t.Fatalf("lead: %+v session %s", lead, lead.Session)
	}

	r = f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads.csv", f.tok, nil, nil)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("content type %s", ct)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v\n%s", err, r.Body)
	}
	want := []string{"id", "created_at", "channel_id", "mode", "session_id", "consent", "email", "message", "name", "phone", "topic"}
	if strings.Join(rows[0], ",") != strings.Join(want, ",") || len(rows) != 3 {
		t.Fatalf("csv header %v, %d rows", rows[0], len(rows))
	}
	// Newest first: the form-encoded lead, its formula defused.
	if rows[1][8] != `'=HYPERLINK("http://evil")` || rows[1][5] != "yes" || rows[2][7] != "Call me\nafter 5" {
		t.Errorf("csv rows %q", rows[1:])
	}

	f.s.Must(t, 204, "DELETE", "/api/leads/"+itoa(first.LeadID), f.tok, nil, nil)
	f.s.Must(t, 404, "GET", "/api/leads/"+itoa(first.LeadID), f.tok, nil, nil)
}

// Every bad answer is a 400 that names each field with its problem; the
// form's settings are checked on create and PATCH the same way.
func TestSubmitValidation(t *testing.T) {
	f := newFixture(t, store.SQLite, map[string]string{"AGENTLINE_FORM_SUBMITS_PER_MINUTE": "1000"})
	c := f.formChannel(t, contactForm, false)
	long := strings.Repeat("x", 501)
	cases := []struct {
		name   string
		body   any
		fields map[string]string // field -> part of its message; nil: a body-level error
	}{
		{"missing required", with(map[string]any{"name": nil, "topic": nil}), map[string]string{"name": "is required", "topic": "is required"}},
		{"blank required", with(map[string]any{"name": "   "}), map[string]string{"name": "is required"}},
		{"bad email", with(map[string]any{"email": "ada@"}), map[string]string{"email": "must be an email address"}},
		{"email without dot", with(map[string]any{"email": "ada@localhost"}), map[string]string{"email": "must be an email address"}},
		{"email with name", with(map[string]any{"email": "Ada <ada@example.com>"}), map[string]string{"email": "must be an email address"}},
		{"bad phone", with(map[string]any{"phone": "call me"}), map[string]string{"phone": "must be a phone number"}},
		{"unknown option", with(map[string]any{"topic": "Jobs"}), map[string]string{"topic": "must be one of the choices"}},
		{"unchecked required box", with(map[string]any{"consent": false}), map[string]string{"consent": "must be checked"}},
		{"checkbox as text", with(map[string]any{"consent": "yes"}), map[string]string{"consent": "must be true or false"}},
		{"number as text", with(map[string]any{"name": 42}), map[string]string{"name": "must be text"}},
		{"too long", with(map[string]any{"name": long}), map[string]string{"name": "is longer than 500 characters"}},
		{"control characters", with(map[string]any{"name": "Ada\x00"}), map[string]string{"name": "not allowed"}},
		{"newline outside a textarea", with(map[string]any{"name": "Ada\nBo"}), map[string]string{"name": "not allowed"}},
		{"unknown field", with(map[string]any{"age": "42"}), map[string]string{"age": "no such field"}},
		{"several at once", with(map[string]any{"email": "x", "phone": "y", "consent": false}),
			map[string]string{"email": "email", "phone": "phone", "consent": "checked"}},
		{"not an object", `["ada"]`, nil},
		{"malformed", `{"name":`, nil},
		{"two objects", `{} {}`, nil},
		{"empty", ``, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.s.Do(t, "POST", submitPath(c), "", tc.body)
			var e struct {
				Error struct {
					Code   string            `json:"code"`
					Field  string            `json:"field"`
					Fields map[string]string `json:"fields"`
				} `json:"error"`
			}
			r.JSON(t, &e)
			if r.Status != 400 || e.Error.Code != "invalid_request" {
				t.Fatalf("%s", r)
			}
			if tc.fields == nil {
				if len(e.Error.Fields) != 0 {
					t.Errorf("body-level error with fields: %s", r)
				}
				return
			}
			if len(e.Error.Fields) != len(tc.fields) {
				t.Errorf("fields %v, want %v", e.Error.Fields, tc.fields)
			}
			for name, part := range tc.fields {
				if !strings.Contains(e.Error.Fields[name], part) {
					t.Errorf("field %s: %q, want it to say %q", name, e.Error.Fields[name], part)
				}
			}
		})
	}
	// Form-encoded problems of its own.
	for _, tc := range []struct{ name, body, field string }{
		{"repeated field", "name=a&name=b&email=a@example.com&topic=Sales&consent=on", "name"},
		{"odd checkbox", "name=a&email=a@example.com&topic=Sales&consent=maybe", "consent"},
	} {
		req := f.s.Request(t, "POST", submitPath(c), "", tc.body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if r := f.s.Send(t, req); r.Status != 400 || !strings.Contains(string(r.Body), `"`+tc.field+`":`) {
			t.Errorf("%s: %s", tc.name, r)
		}
	}
	req := f.s.Request(t, "POST", submitPath(c), "", "name=a")
	req.Header.Set("Content-Type", "text/plain")
	if r := f.s.Send(t, req); r.Status != 400 {
		t.Errorf("text/plain: %s", r)
	}
	if r := f.s.Do(t, "POST", submitPath(c), "", `{"message":"`+strings.Repeat("x", 70<<10)+`"}`); r.Status != 413 {
		t.Errorf("oversized body: %s", r)
	}
	// No lead was stored by any of them.
	var list struct{ Leads []agentline.Lead }
	f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads", f.tok, nil, &list)
	if len(list.Leads) != 0 {
		t.Errorf("%d leads stored from bad submissions", len(list.Leads))
	}
	// Unknown and voice channels are no form.
	var voice agentline.Channel
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project.ID)+"/channels", f.tok, map[string]any{"type": "voice_widget", "name": "v", "agent_id": f.agent.ID}, &voice)
	for _, p := range []string{submitPath(voice), "/api/channels/form/submit/999999", "/api/channels/form/submit/x"} {
		if r := f.s.Do(t, "POST", p, "", good); r.Status != 404 {
			t.Errorf("%s: %s", p, r)
		}
	}

	// Settings: field-named 400s on create and PATCH.
	base := "/api/projects/" + itoa(f.project.ID) + "/channels"
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"bad field name", map[string]any{"type": "form", "name": "f", "settings": map[string]any{"form": map[string]any{
			"fields": []map[string]any{{"name": "ok", "label": "OK"}, {"name": "Not OK", "label": "x"}}}}}, "settings.form.fields[1].name"},
		{"live chat without agent", map[string]any{"type": "form", "name": "f", "settings": map[string]any{"form": map[string]any{"mode": "live_chat"}}}, "agent_id"},
		{"form on a voice widget", map[string]any{"type": "voice_widget", "name": "f", "agent_id": f.agent.ID, "settings": map[string]any{"form": map[string]any{}}}, "settings.form"},
		{"unknown form setting", map[string]any{"type": "form", "name": "f", "settings": map[string]any{"form": map[string]any{"colour": "red"}}}, "colour"},
		{"private notify_url scheme", map[string]any{"type": "form", "name": "f", "settings": map[string]any{"form": map[string]any{"notify_url": "file:///etc/passwd"}}}, "settings.form.notify_url"},
	} {
		r := f.s.Do(t, "POST", base, f.tok, tc.body)
		if r.Status != 400 || !strings.Contains(string(r.Body), `"field":"`+tc.field+`"`) {
			t.Errorf("%s: %s", tc.name, r)
		}
	}
	if r := f.s.Do(t, "PATCH", "/api/channels/"+itoa(c.ID), f.tok, map[string]any{"settings": map[string]any{"form": map[string]any{
		"fields": []map[string]any{{"name": "a", "label": "A", "type": "select"}}}}}); r.Status != 400 || !strings.Contains(string(r.Body), `"field":"settings.form.fields[0].options"`) {
		t.Errorf("PATCH select without options: %s", r)
	}
	var patched agentline.Channel
	f.s.Must(t, 200, "PATCH", "/api/channels/"+itoa(c.ID), f.tok, map[string]any{"settings": map[string]any{"form": map[string]any{"submit_label": "Call me"}}}, &patched)
	if patched.Settings.Form.SubmitLabel != "Call me" || len(patched.Settings.Form.Fields) != 6 {
		t.Errorf("PATCH kept the rest? %+v", patched.Settings.Form)
	}
	// Any page may post the form with JSON: the preflight allows it.
	pre := f.s.Request(t, "OPTIONS", submitPath(c), "", nil)
	pre.Header.Set("Origin", "https://shop.example.com")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type")
	if r := f.s.Send(t, pre); r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Allow-Headers") != "Content-Type" {
		t.Errorf("preflight: %s %v", r, r.Header)
	}
	// A new form channel without settings works at once: name and email.
	var plain agentline.Channel
	f.s.Must(t, 201, "POST", base, f.tok, map[string]any{"type": "form", "name": "plain"}, &plain)
	f.s.Must(t, 201, "POST", submitPath(plain), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, nil)
}

// The honeypot refuses a filled-in hidden field, and the per-IP limit
// refuses the submission after the allowed number with 429 Retry-After.
func TestHoneypotAndRateLimit(t *testing.T) {
	f := newFixture(t, store.SQLite, map[string]string{"AGENTLINE_FORM_SUBMITS_PER_MINUTE": "4"})
	c := f.formChannel(t, map[string]any{}, false)
	ok := map[string]any{"name": "Ada", "email": "ada@example.com"}
	bot := map[string]any{"name": "Ada", "email": "ada@example.com", "_website": "http://spam.example"}
	// The refusal does not tell a bot which field gave it away.
	if r := f.s.Do(t, "POST", submitPath(c), "", bot); r.Status != 400 || r.ErrorCode() != "invalid_request" ||
		strings.Contains(string(r.Body), "_website") || strings.Contains(string(r.Body), `"field"`) || strings.Contains(string(r.Body), "hidden") {
		t.Fatalf("honeypot: %s", r)
	}
	req := f.s.Request(t, "POST", submitPath(c), "", "name=Ada&email=ada%40example.com&_website=http%3A%2F%2Fspam")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	page := f.s.Send(t, req)
	if page.Status != 400 || strings.Contains(string(page.Body), "hidden") || strings.Contains(string(page.Body), "must be left empty") {
		t.Fatalf("honeypot, as the page: %d %s", page.Status, page.Body)
	}
	f.s.Must(t, 201, "POST", submitPath(c), "", map[string]any{"name": "Ada", "email": "ada@example.com", "_website": ""}, nil)
	f.s.Must(t, 201, "POST", submitPath(c), "", ok, nil)
	r := f.s.Do(t, "POST", submitPath(c), "", ok)
	if r.Status != 429 || r.ErrorCode() != "rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("5th submit in a minute (two bots, two leads): %s %v", r, r.Header)
	}
	var list struct{ Leads []agentline.Lead }
	f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project.ID)+"/leads", f.tok, nil, &list)
	if len(list.Leads) != 2 {
		t.Errorf("%d leads stored, want 2 (no bot, nothing over the limit)", len(list.Leads))
	}
}

// A submission refused for its answers (a person's typo) does not count
// toward the per-client limit: after any number of them the visitor can
// still send the corrected form as often as the limit allows. Stored and
// abusive (honeypot) ones count.
func TestRefusedAnswersDoNotCountTowardTheLimit(t *testing.T) {
	f := newFixture(t, store.SQLite, map[string]string{"AGENTLINE_FORM_SUBMITS_PER_MINUTE": "2"})
	c := f.formChannel(t, map[string]any{}, false)
	for i := range 4 {
		r := f.s.Do(t, "POST", submitPath(c), "", map[string]any{"name": "Ada", "email": "not an email"})
		if r.Status != 400 || !strings.Contains(string(r.Body), `"field":"email"`) {
			t.Fatalf("bad answers #%d: %s", i+1, r)
		}
	}
	f.s.Must(t, 201, "POST", submitPath(c), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, nil)
	if r := f.s.Do(t, "POST", submitPath(c), "", map[string]any{"name": "Ada", "email": "ada@example.com", "_website": "x"}); r.Status != 400 {
		t.Fatalf("honeypot: %s", r)
	}
	if r := f.s.Do(t, "POST", submitPath(c), "", map[string]any{"name": "Ada", "email": "ada@example.com"}); r.Status != 429 {
		t.Fatalf("after a stored and a honeypot submission, limit 2: %s", r)
	}
}

// Another tenant's lead answers like a missing one; a viewer may read but
// not delete.
func TestLeadPermissions(t *testing.T) {
	f := newFixture(t, store.SQLite, nil)
	c := f.formChannel(t, map[string]any{}, false)
	var sub struct {
		LeadID int64 `json:"lead_id"`
	}
	f.s.Must(t, 201, "POST", submitPath(c), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, &sub)
	stranger, stok := f.s.NewUser(t, "stranger@example.com")
	_ = stranger
	viewer, vtok := f.s.NewUser(t, "viewer@example.com")
	f.s.Join(t, f.tok, f.project.ID, vtok, viewer.Email, agentline.RoleViewer)
	lead := "/api/leads/" + itoa(sub.LeadID)
	for _, tc := range []struct {
		method, path, tok string
		want              int
	}{
		{"GET", lead, stok, 404},
		{"DELETE", lead, stok, 404},
		{"GET", "/api/projects/" + itoa(f.project.ID) + "/leads", stok, 404},
		{"GET", "/api/projects/" + itoa(f.project.ID) + "/leads.csv", stok, 404},
		{"GET", lead, vtok, 200},
		{"GET", "/api/projects/" + itoa(f.project.ID) + "/leads.csv", vtok, 200},
		{"DELETE", lead, vtok, 403},
		{"GET", lead, "", 401},
		{"GET", "/api/leads/0", f.tok, 404},
		{"DELETE", lead, f.tok, 204},
	} {
		if r := f.s.Do(t, tc.method, tc.path, tc.tok, nil); r.Status != tc.want {
			t.Errorf("%s %s: %s, want %d", tc.method, tc.path, r, tc.want)
		}
	}
}

// The form page's heading and title are for visitors: the project's name
// shown to visitors (branding.display_name), else the project's name;
// never the channel's internal name. The page shown again after a
// refused submission says the same, and so does the thank-you page's title.
func TestFormPageTitleIsForVisitors(t *testing.T) {
	f := newFixture(t, store.SQLite, nil)
	c := f.formChannel(t, map[string]any{}, false)
	f.s.Must(t, 200, "PATCH", "/api/channels/"+itoa(c.ID), f.tok, map[string]any{"name": "lead form v2 (internal)"}, nil)
	heading := func(r *apptest.Response) string {
		b := string(r.Body)
		i, j := strings.Index(b, "<h1>"), strings.Index(b, "</h1>")
		if i < 0 || j < i {
			return ""
		}
		return b[i+4 : j]
	}
	check := func(what string, r *apptest.Response, want string) {
		t.Helper()
		if got := heading(r); got != want || !strings.Contains(string(r.Body), "<title>"+want+"</title>") || strings.Contains(string(r.Body), "internal") {
			t.Errorf("%s: heading %q, want %q; page:\n%s", what, got, want, r.Body)
		}
	}
	check("the page", f.s.Do(t, "GET", "/api/channels/form/embed/"+itoa(c.ID), "", nil), "Acme")
	f.s.Must(t, 200, "PATCH", "/api/projects/"+itoa(f.project.ID), f.tok, map[string]any{"branding": map[string]string{"display_name": "Acme Support"}}, nil)
	check("the page with a display name", f.s.Do(t, "GET", "/api/channels/form/embed/"+itoa(c.ID), "", nil), "Acme Support")
	post := func(body string) *apptest.Response {
		req := f.s.Request(t, "POST", submitPath(c), "", body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "text/html")
		return f.s.Send(t, req)
	}
	check("the page shown again", post("name=Ada"), "Acme Support")
	if r := post("name=Ada&email=ada%40example.com"); r.Status != 201 || !strings.Contains(string(r.Body), "<title>Acme Support</title>") || strings.Contains(string(r.Body), "internal") {
		t.Errorf("the thank-you page: %s", r.Body)
	}
}
