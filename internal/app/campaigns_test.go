package app_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// campaignJSON is a campaign as the API answers it.
type campaignJSON struct {
	agentline.Campaign
	RetryAfter string `json:"retry_after"`
}

// campaignSetup is a signed-in owner with a project, two agents and a
// stranger with a project of their own.
type campaignSetup struct {
	s                 *apptest.Server
	tok, stranger     string
	project, other    agentline.Project
	agent, agent2, st agentline.Agent
}

func newCampaignSetup(t *testing.T, s *apptest.Server) campaignSetup {
	t.Helper()
	c := campaignSetup{s: s}
	_, c.tok = s.NewUser(t, "owner@example.com")
	_, c.stranger = s.NewUser(t, "stranger@example.com")
	s.Must(t, 201, "POST", "/api/projects", c.tok, map[string]string{"name": "Shop"}, &c.project)
	s.Must(t, 201, "POST", "/api/projects", c.stranger, map[string]string{"name": "Elsewhere"}, &c.other)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(c.project.ID)+"/agents", c.tok, map[string]string{"name": "Ada"}, &c.agent)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(c.project.ID)+"/agents", c.tok, map[string]string{"name": "Bo"}, &c.agent2)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(c.other.ID)+"/agents", c.stranger, map[string]string{"name": "Eve"}, &c.st)
	return c
}

func (c campaignSetup) create(t *testing.T, body map[string]any) campaignJSON {
	t.Helper()
	var out campaignJSON
	c.s.Must(t, 201, "POST", "/api/projects/"+itoa(c.project.ID)+"/campaigns", c.tok, body, &out)
	return out
}

// Campaigns over HTTP: defaults, a 400 naming the field for every bad
// value, the status transitions with their 409s, and another project's
// campaign answering 404.
func TestCampaignsOverHTTP(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		c := newCampaignSetup(t, s)
		camp := c.create(t, map[string]any{"name": " Renewals ", "agent_id": c.agent.ID})
		w := camp.CallingWindow
		if camp.Status != agentline.CampaignDraft || camp.Name != "Renewals" || strings.Join(w.Days, ",") != "mon,tue,wed,thu,fri" ||
			w.Start != "09:00" || w.End != "20:00" || camp.CallsPerSecond != 1 || camp.MaxAttempts != 3 || camp.RetryAfter != "1h" ||
			camp.Voicemail.Action != "hang_up" || camp.MaxConcurrentCalls != 1 || camp.Counts.Total != 0 || camp.StartedAt != nil {
			t.Fatalf("defaults = %+v", camp)
		}
		// The catalog gives the console's new-campaign form these same
		// defaults, written as the campaign is.
		var cat struct {
			CampaignDefaults map[string]any `json:"campaign_defaults"`
		}
		s.Must(t, 200, "GET", "/api/catalog", c.tok, nil, &cat)
		var created map[string]any
		s.Must(t, 200, "GET", "/api/campaigns/"+itoa(camp.ID), c.tok, nil, &created)
		if len(cat.CampaignDefaults) != 6 {
			t.Errorf("catalog campaign_defaults = %v", cat.CampaignDefaults)
		}
		for k, v := range cat.CampaignDefaults {
			if fmt.Sprint(created[k]) != fmt.Sprint(v) {
				t.Errorf("catalog campaign_defaults %s = %v; a campaign created without it has %v", k, v, created[k])
			}
		}
		list := "/api/projects/" + itoa(c.project.ID) + "/campaigns"
		one := "/api/campaigns/" + itoa(camp.ID)
		for _, bad := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"agent_id": c.agent.ID}, "name"},
			{map[string]any{"name": "x"}, "agent_id"},
			{map[string]any{"name": "x", "agent_id": c.st.ID}, "agent_id"},
			{map[string]any{"name": " ", "agent_id": c.agent.ID}, "name"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "calling_window": map[string]any{"days": []string{"monday"}}}, "calling_window.days"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "calling_window": map[string]any{"start": "21:00"}}, "calling_window.start"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "calling_window": map[string]any{"end": "25:00"}}, "calling_window.end"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "calls_per_second": 0}, "calls_per_second"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "calls_per_second": 51}, "calls_per_second"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "max_concurrent_calls": 0}, "max_concurrent_calls"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "max_attempts": 11}, "max_attempts"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "retry_after": "500ms"}, "retry_after"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "retry_after": "soon"}, "retry_after"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "voicemail": map[string]any{"action": "beep"}}, "voicemail.action"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "voicemail": map[string]any{"action": "leave_message"}}, "voicemail.message"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "voicemail": map[string]any{"action": "leave_message", "message": strings.Repeat("a", 1001)}}, "voicemail.message"},
			{map[string]any{"name": "x", "agent_id": c.agent.ID, "status": "running"}, "status"},
		} {
			r := s.Do(t, "POST", list, c.tok, bad.body)
			var e struct{ Error agentline.Error }
			if r.JSON(t, &e); r.Status != 400 || e.Error.Field != bad.field {
				t.Errorf("POST %v = %s, want 400 naming %s", bad.body, r, bad.field)
			}
		}
		// PATCH changes what it names: one end of the window, the retry.
		s.Must(t, 200, "PATCH", one, c.tok, map[string]any{"calling_window": map[string]any{"start": "08:30"}, "retry_after": "90s",
			"voicemail": map[string]any{"action": "leave_message", "message": "Hi {{first_name}}, call us back."}, "agent_id": c.agent2.ID}, &camp)
		if camp.CallingWindow.Start != "08:30" || camp.CallingWindow.End != "20:00" || camp.RetryAfter != "1m30s" ||
			camp.Voicemail.Action != "leave_message" || camp.AgentID != c.agent2.ID {
			t.Fatalf("after PATCH = %+v", camp)
		}
		testCampaignTransitions(t, c, camp)

		// Another project's campaign is not found, whatever is asked.
		for _, r := range []struct{ method, path string }{
			{"GET", one}, {"PATCH", one}, {"DELETE", one}, {"POST", one + "/start"}, {"POST", one + "/cancel"},
			{"GET", one + "/contacts"}, {"POST", one + "/contacts"}, {"GET", one + "/contacts.csv"},
			{"GET", list}, {"POST", list},
		} {
			if got := s.Do(t, r.method, r.path, c.stranger, map[string]any{"name": "x"}); got.Status != 404 || strings.Contains(string(got.Body), "Renewals") {
				t.Errorf("stranger %s %s = %s, want 404", r.method, r.path, got)
			}
		}
		page := s.Must(t, 200, "GET", list, c.tok, nil, nil)
		var body struct {
			Campaigns  []campaignJSON
			NextCursor *string `json:"next_cursor"`
		}
		if page.JSON(t, &body); len(body.Campaigns) != 1 || body.Campaigns[0].RetryAfter != "1m30s" || body.NextCursor != nil {
			t.Fatalf("list = %s", page)
		}
	})
}

// testCampaignTransitions walks a draft campaign through start, pause,
// resume and cancel, with the refusals on the way.
func testCampaignTransitions(t *testing.T, c campaignSetup, camp campaignJSON) {
	s, one := c.s, "/api/campaigns/"+itoa(camp.ID)
	r := s.Do(t, "POST", one+"/start", c.tok, nil)
	if r.Status != 409 || !strings.Contains(string(r.Body), "has no phone number") {
		t.Fatalf("start without a number = %s", r)
	}
	if _, err := s.App.Store.CreatePhoneNumber(context.Background(), agentline.PhoneNumber{ProjectID: c.project.ID, AgentID: &camp.AgentID,
		PhoneNumber: "+14155550142", Status: agentline.NumberActive, CarrierSID: "PNcamp"}); err != nil {
		t.Fatal(err)
	}
	// A running campaign with nobody left to call completes at once, so
	// this one waits for a contact whose window is shut for the whole run:
	// open only on the weekday three days from now, in UTC.
	shut := []string{strings.ToLower(time.Now().UTC().AddDate(0, 0, 3).Weekday().String()[:3])}
	s.Must(t, 200, "PATCH", one, c.tok, map[string]any{"calling_window": map[string]any{"days": shut}}, nil)
	s.Must(t, 200, "POST", one+"/contacts", c.tok, []map[string]string{{"phone_number": "+14155550177", "timezone": "UTC"}}, nil)
	for _, step := range []struct {
		action, status string
		want           int
		says           string
	}{
		{"pause", "", 409, "the campaign is draft; only a running campaign can be paused"},
		{"start", "running", 200, ""},
		{"start", "", 409, "the campaign is running; only a draft campaign can be started"},
		{"resume", "", 409, "only a paused campaign can be resumed"},
		{"pause", "paused", 200, ""},
		{"resume", "running", 200, ""},
	} {
		r := s.Do(t, "POST", one+"/"+step.action, c.tok, nil)
		var got campaignJSON
		if step.want == 200 {
			r.JSON(t, &got)
		}
		if r.Status != step.want || got.Status != step.status || !strings.Contains(string(r.Body), step.says) {
			t.Fatalf("%s = %s, want %d %s", step.action, r, step.want, step.status)
		}
		if step.want == 409 && r.ErrorCode() != agentline.EConflict {
			t.Fatalf("%s = %s, want conflict", step.action, r)
		}
	}
	// A running campaign keeps its agent; its window and limits change.
	if r := s.Do(t, "PATCH", one, c.tok, map[string]any{"agent_id": c.agent.ID}); r.Status != 409 || !strings.Contains(string(r.Body), "only a draft campaign's agent can change") {
		t.Fatalf("agent of a running campaign = %s", r)
	}
	var got campaignJSON
	s.Must(t, 200, "PATCH", one, c.tok, map[string]any{"calling_window": map[string]any{"days": shut, "start": "10:00"}, "max_concurrent_calls": 5}, &got)
	if got.MaxConcurrentCalls != 5 || got.CallingWindow.Start != "10:00" || got.StartedAt == nil {
		t.Fatalf("running campaign after PATCH = %+v", got)
	}
	if r := s.Do(t, "DELETE", one, c.tok, nil); r.Status != 409 {
		t.Fatalf("delete a running campaign = %s", r)
	}
	s.Must(t, 200, "POST", one+"/cancel", c.tok, nil, &got)
	if got.Status != agentline.CampaignCancelled || got.FinishedAt == nil {
		t.Fatalf("cancelled = %+v", got)
	}
	if r := s.Do(t, "POST", one+"/cancel", c.tok, nil); r.Status != 409 || !strings.Contains(string(r.Body), "only a draft, running or paused campaign can be cancelled") {
		t.Fatalf("cancel again = %s", r)
	}
	if r := s.Do(t, "POST", one+"/contacts", c.tok, []map[string]string{{"phone_number": "+14155550101"}}); r.Status != 409 {
		t.Fatalf("contacts for a cancelled campaign = %s", r)
	}
}

// Contacts over HTTP: a CSV upload with bad rows, a duplicate and numbers
// on the do-not-call list gives exact counts; the list pages and filters;
// contacts.csv neutralizes formulas; the do-not-call list's CRUD.
func TestCampaignContactsOverHTTP(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		c := newCampaignSetup(t, s)
		camp := c.create(t, map[string]any{"name": "Renewals", "agent_id": c.agent.ID})
		one := "/api/campaigns/" + itoa(camp.ID)
		dnc := "/api/projects/" + itoa(c.project.ID) + "/dnc"
		s.Must(t, 201, "POST", dnc, c.tok, map[string]string{"phone_number": "+1 (415) 555-0104", "reason": "asked"}, nil)
		s.Must(t, 201, "POST", dnc, c.tok, map[string]string{"phone_number": "+14155550105"}, nil)
		var again agentline.DoNotCall
		s.Must(t, 200, "POST", dnc, c.tok, map[string]string{"phone_number": "+14155550104", "reason": "other"}, &again)
		if again.Reason != "asked" || again.PhoneNumber != "+14155550104" {
			t.Fatalf("listed again = %+v", again)
		}
		if r := s.Do(t, "POST", dnc, c.tok, map[string]string{"phone_number": "555"}); r.Status != 400 || r.ErrorCode() != agentline.EInvalid {
			t.Fatalf("bad number = %s", r)
		}

		file := "phone_number,first_name,timezone,consent_source\n" +
			"+14155550101,Ada,,web form\n" +
			"+14155550102,=cmd,America/Chicago,\n" +
			"not a number,Bo,,\n" +
			"+14155550103,Cy,Mars/Olympus,\n" +
			"+1 415 555 0101,Ada again,,\n" +
			"+14155550104,Di,,\n" +
			"+14155550105,Ed,,\n" +
			"+14155550106,Flo,,\n"
		req := s.Request(t, "POST", one+"/contacts", c.tok, file)
		req.Header.Set("Content-Type", "text/csv; charset=utf-8")
		r := s.Send(t, req)
		var up struct {
			Added, Duplicates int
			DoNotCall         int `json:"do_not_call"`
			Errors            []struct {
				Line    int
				Message string
			}
		}
		if r.JSON(t, &up); r.Status != 200 || up.Added != 5 || up.Duplicates != 1 || up.DoNotCall != 2 || len(up.Errors) != 2 ||
			up.Errors[0].Line != 4 || up.Errors[1].Line != 5 || !strings.Contains(up.Errors[1].Message, "Mars/Olympus") {
			t.Fatalf("CSV upload = %s", r)
		}
		// JSON: a number the campaign has is a duplicate.
		s.Must(t, 200, "POST", one+"/contacts", c.tok, []map[string]any{{"phone_number": "+14155550102"},
			{"phone_number": "+14155550107", "variables": map[string]string{"first_name": "Gus"}, "consent": map[string]string{"source": "call", "at": "2024-05-01T12:00:00Z"}}}, &up)
		if up.Added != 1 || up.Duplicates != 1 || up.DoNotCall != 0 || len(up.Errors) != 0 {
			t.Fatalf("JSON upload = %+v", up)
		}
		if r := s.Do(t, "POST", one+"/contacts", c.tok, map[string]any{"phone_number": "+14155550108"}); r.Status != 400 {
			t.Fatalf("an object, not an array = %s", r)
		}
		big := "phone_number,note\n" + strings.Repeat("+14155550109,"+strings.Repeat("x", 1000)+"\n", 1100)
		req = s.Request(t, "POST", one+"/contacts", c.tok, big)
		req.Header.Set("Content-Type", "text/csv")
		if r := s.Send(t, req); r.Status != 413 {
			t.Fatalf("a body over the limit = %s", r)
		}
		var got campaignJSON
		s.Must(t, 200, "GET", one, c.tok, nil, &got)
		if want := (agentline.CampaignCounts{Total: 6, Pending: 4, DoNotCall: 2}); got.Counts != want {
			t.Fatalf("counts = %+v, want %+v", got.Counts, want)
		}
		testContactPages(t, s, c.tok, one)
		testContactsCSV(t, s, c.tok, one)

		// The do-not-call list pages by number and deletes by number.
		var page struct {
			Items      []agentline.DoNotCall
			NextCursor *string `json:"next_cursor"`
		}
		s.Must(t, 200, "GET", dnc+"?limit=1", c.tok, nil, &page)
		if len(page.Items) != 1 || page.Items[0].PhoneNumber != "+14155550104" || page.NextCursor == nil {
			t.Fatalf("first page = %+v", page)
		}
		s.Must(t, 200, "GET", dnc+"?limit=1&cursor="+url.QueryEscape(*page.NextCursor), c.tok, nil, &page)
		if len(page.Items) != 1 || page.Items[0].PhoneNumber != "+14155550105" || page.NextCursor != nil {
			t.Fatalf("second page = %+v", page)
		}
		if r := s.Do(t, "GET", "/api/projects/"+itoa(c.project.ID)+"/dnc", c.stranger, nil); r.Status != 404 {
			t.Fatalf("stranger's list = %s", r)
		}
		if r := s.Do(t, "DELETE", dnc+"/+14155550104", c.stranger, nil); r.Status != 404 {
			t.Fatalf("stranger's delete = %s", r)
		}
		s.Must(t, 204, "DELETE", dnc+"/"+url.PathEscape("+14155550104"), c.tok, nil, nil)
		if r := s.Do(t, "DELETE", dnc+"/+14155550104", c.tok, nil); r.Status != 404 {
			t.Fatalf("delete again = %s", r)
		}
	})
}

// testContactPages walks the contacts two at a time and filters them.
func testContactPages(t *testing.T, s *apptest.Server, tok, one string) {
	t.Helper()
	var numbers []string
	cursor := ""
	for range 10 {
		var page struct {
			Contacts   []agentline.CampaignContact
			NextCursor *string `json:"next_cursor"`
		}
		s.Must(t, 200, "GET", one+"/contacts?limit=2&cursor="+url.QueryEscape(cursor), tok, nil, &page)
		for _, ct := range page.Contacts {
			numbers = append(numbers, ct.PhoneNumber)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	want := "+14155550101 +14155550102 +14155550104 +14155550105 +14155550106 +14155550107"
	if got := strings.Join(numbers, " "); got != want {
		t.Fatalf("walked %s, want %s", got, want)
	}
	var page struct{ Contacts []agentline.CampaignContact }
	s.Must(t, 200, "GET", one+"/contacts?status=do_not_call", tok, nil, &page)
	if len(page.Contacts) != 2 || page.Contacts[0].PhoneNumber != "+14155550104" || page.Contacts[0].Status != "do_not_call" {
		t.Fatalf("do_not_call contacts = %+v", page.Contacts)
	}
	s.Must(t, 200, "GET", one+"/contacts?limit=1", tok, nil, &page)
	ct := page.Contacts[0]
	if ct.Variables["first_name"] != "Ada" || ct.Consent == nil || ct.Consent.Source != "web form" || ct.ConversationIDs == nil ||
		ct.Attempts != 0 || ct.NextAttemptAt == nil || ct.LastOutcome != nil {
		t.Fatalf("first contact = %+v", ct)
	}
	if r := s.Do(t, "GET", one+"/contacts?status=done", tok, nil); r.Status != 400 {
		t.Fatalf("unknown status = %s", r)
	}
}

// testContactsCSV reads contacts.csv back: a variable column per name, and
// a cell a spreadsheet would run as a formula written as text.
func testContactsCSV(t *testing.T, s *apptest.Server, tok, one string) {
	t.Helper()
	r := s.Must(t, 200, "GET", one+"/contacts.csv", tok, nil, nil)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("Content-Type = %q", ct)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || len(rows) != 7 {
		t.Fatalf("contacts.csv = %v %q", err, r.Body)
	}
	header := strings.Join(rows[0], ",")
	if !strings.HasPrefix(header, "id,phone_number,timezone,status,attempts") || !strings.HasSuffix(header, ",dials,variables.first_name") {
		t.Fatalf("header = %s", header)
	}
	last := len(rows[0]) - 1
	// A number starts with +, which a spreadsheet reads as a formula: the
	// quote keeps it text, + included.
	if rows[2][1] != "'+14155550102" || rows[2][last] != "'=cmd" || rows[2][2] != "America/Chicago" {
		t.Fatalf("row of =cmd = %v", rows[2])
	}
	if rows[6][6] != "call" || rows[6][7] != "2024-05-01T12:00:00Z" || rows[6][last] != "Gus" {
		t.Fatalf("row with consent = %v", rows[6])
	}
	if got := fmt.Sprint(rows[3][3]); got != "do_not_call" {
		t.Fatalf("status of a listed number = %s", got)
	}
}
