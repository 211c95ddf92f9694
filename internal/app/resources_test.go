package app_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// Creating and changing agents over HTTP: defaults, the provider derived
// from the model, and a 400 naming the field for every bad value.
func TestAgentsOverHTTP(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		_, tok := s.NewUser(t, "ann@example.com")
		var p agentline.Project
		s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
		agents := "/api/projects/" + itoa(p.ID) + "/agents"
		if p.RecordingRetentionDays != 0 {
			t.Fatalf("a new project keeps recordings for %d days, want 0 (until deleted)", p.RecordingRetentionDays)
		}
		s.Must(t, 200, "PATCH", "/api/projects/"+itoa(p.ID), tok, map[string]any{"recording_retention_days": 30}, &p)
		if p.RecordingRetentionDays != 30 || p.Name != "Shop" {
			t.Fatalf("after setting retention = %+v", p)
		}
		if r := s.Do(t, "PATCH", "/api/projects/"+itoa(p.ID), tok, map[string]any{"recording_retention_days": -1}); r.Status != 400 || r.ErrorCode() != agentline.EInvalid {
			t.Fatalf("negative retention = %s", r)
		}

		var a agentline.Agent
		s.Must(t, 201, "POST", agents, tok, map[string]string{"name": "Ada"}, &a)
		if a.Model != "gpt-realtime" || a.Provider != agentline.ProviderOpenAI || a.Voice != "marin" || a.Language != "en" || a.ProjectID != p.ID ||
			a.RecordCalls || !a.Analysis.Summary || a.Analysis.SuccessCriteria != "" || string(a.Analysis.DataSchema) != "null" {
			t.Fatalf("defaults = %+v", a)
		}
		one := "/api/agents/" + itoa(a.ID)

		// Recording and analysis settings: the analysis is replaced whole.
		schema := `{"type":"object","properties":{"order_id":{"type":"string"},"callback_wanted":{"type":"boolean"}}}`
		s.Must(t, 200, "PATCH", one, tok, map[string]any{"record_calls": true,
			"analysis": map[string]any{"summary": false, "success_criteria": "The caller got an order id.", "data_schema": json.RawMessage(schema)}}, &a)
		if !a.RecordCalls || a.Analysis.Summary || a.Analysis.SuccessCriteria != "The caller got an order id." || !strings.Contains(string(a.Analysis.DataSchema), "callback_wanted") {
			t.Fatalf("after recording and analysis change = %+v", a)
		}
		s.Must(t, 200, "PATCH", one, tok, map[string]any{"record_calls": false, "analysis": agentline.DefaultAnalysis()}, &a)
		if a.RecordCalls || !a.Analysis.Summary || string(a.Analysis.DataSchema) != "null" {
			t.Fatalf("after resetting recording and analysis = %+v", a)
		}

		// Switching provider without a voice takes the new provider's default;
		// with a voice, keeps it; fields not sent keep their value.
		s.Must(t, 200, "PATCH", one, tok, map[string]string{"model": "gemini-live-2.5-flash-preview"}, &a)
		if a.Provider != agentline.ProviderGemini || a.Voice != "Puck" || a.Name != "Ada" {
			t.Fatalf("after model change = %+v", a)
		}
		s.Must(t, 200, "PATCH", one, tok, map[string]string{"model": "gpt-4o-realtime-preview", "voice": "cedar", "greeting": "Hi!"}, &a)
		if a.Provider != agentline.ProviderOpenAI || a.Voice != "cedar" || a.Greeting != "Hi!" {
			t.Fatalf("after model and voice change = %+v", a)
		}
		s.Must(t, 200, "PATCH", one, tok, map[string]any{"greeting": ""}, &a)
		if a.Greeting != "" || a.Voice != "cedar" {
			t.Fatalf("clearing greeting = %+v", a)
		}
		// A catalog voice in another case is taken, spelled as the catalog does.
		var g agentline.Agent
		s.Must(t, 201, "POST", agents, tok, map[string]string{"name": "Gia", "model": "gemini-live-2.5-flash-preview", "voice": "kore"}, &g)
		if g.Voice != "Kore" {
			t.Fatalf("voice kore on Gemini stored as %q, want Kore", g.Voice)
		}
		s.Must(t, 200, "PATCH", "/api/agents/"+itoa(g.ID), tok, map[string]string{"voice": "Zephyr"}, &g)
		s.Must(t, 204, "DELETE", "/api/agents/"+itoa(g.ID), tok, nil, nil)

		for _, tc := range []struct {
			method, path string
			body         any
			field, says  string
		}{
			{"POST", agents, map[string]string{"name": "x", "model": "gpt-4o"}, "model", "gpt-realtime*"},
			{"PATCH", one, map[string]string{"model": "gemini-2.5-flash"}, "model", "gemini-*live*"},
			{"POST", agents, map[string]string{}, "name", "required"},
			{"PATCH", one, map[string]string{"name": "   "}, "name", "required"},
			{"POST", agents, map[string]string{"name": "x", "language": "English"}, "language", "BCP 47"},
			{"POST", agents, map[string]string{"name": "x", "greeting": strings.Repeat("g", 2001)}, "greeting", "2000"},
			{"POST", agents, map[string]any{"name": "x", "voice": 7}, "voice", "string"},
			// Unknown voices are refused, naming the voices the model takes.
			{"POST", agents, map[string]string{"name": "x", "voice": "darth"}, "voice", `"darth"`},
			{"POST", agents, map[string]string{"name": "x", "voice": "darth"}, "voice", "marin, cedar, alloy"},
			{"POST", agents, map[string]string{"name": "x", "model": "gemini-live-2.5-flash-preview", "voice": "marin"}, "voice", "Puck, Charon"},
			{"PATCH", one, map[string]string{"voice": "darth"}, "voice", "marin, cedar, alloy"},
			{"PATCH", one, map[string]string{"model": "gemini-live-2.5-flash-preview", "voice": "cedar"}, "voice", "Puck, Charon"},
			{"POST", agents, map[string]any{"name": "x", "provider": "openai"}, "provider", "unknown field"},
			{"PATCH", one, map[string]any{"id": 9}, "id", "unknown field"},
			{"PATCH", one, map[string]any{"analysis": map[string]any{"data_schema": map[string]string{"type": "string"}}}, "analysis.data_schema", "properties"},
			{"PATCH", one, map[string]any{"record_calls": "yes"}, "record_calls", "true or false"},
		} {
			r := s.Do(t, tc.method, tc.path, tok, tc.body)
			var e struct {
				Error struct{ Code, Message, Field string }
			}
			r.JSON(t, &e)
			if r.Status != 400 || e.Error.Field != tc.field || !strings.Contains(e.Error.Message, tc.says) {
				t.Errorf("%s %v = %s, want 400 on %s saying %q", tc.method, tc.body, r, tc.field, tc.says)
			}
		}
		// A refused change changes nothing.
		var got agentline.Agent
		s.Must(t, 200, "GET", one, tok, nil, &got)
		if !reflect.DeepEqual(got, a) {
			t.Fatalf("after refused changes = %+v, want %+v", got, a)
		}
		var list []agentline.Agent
		s.Must(t, 200, "GET", agents, tok, nil, &list)
		if len(list) != 1 {
			t.Fatalf("agents = %+v", list)
		}
	})
}

func TestProjectsAndMembersOverHTTP(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	_, tok := s.NewUser(t, "ann@example.com")
	_, bobTok := s.NewUser(t, "bob@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": " Shop ", "branding": map[string]string{"display_name": "Shop Inc"}}, &p)
	if p.Name != "Shop" || p.Branding.DisplayName != "Shop Inc" || p.Role != agentline.RoleOwner || p.CreatedAt.IsZero() || p.CreatedAt.Location().String() != "UTC" {
		t.Fatalf("project = %+v", p)
	}
	path := "/api/projects/" + itoa(p.ID)
	// Branding fields not sent keep their value; "" clears one.
	var patched agentline.Project
	s.Must(t, 200, "PATCH", path, tok, map[string]any{"branding": map[string]string{"logo_url": "https://shop.example.com/logo.png"}}, &patched)
	if patched.Name != "Shop" || patched.Branding != (agentline.Branding{DisplayName: "Shop Inc", LogoURL: "https://shop.example.com/logo.png"}) || patched.Role != agentline.RoleOwner {
		t.Fatalf("after branding patch = %+v", patched)
	}
	var cleared agentline.Project
	s.Must(t, 200, "PATCH", path, tok, map[string]any{"branding": map[string]string{"display_name": ""}}, &cleared)
	if cleared.Branding != (agentline.Branding{LogoURL: "https://shop.example.com/logo.png"}) {
		t.Fatalf("after clearing display_name = %+v", cleared)
	}
	for _, tc := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"POST", "/api/projects", map[string]string{"name": ""}, "name"},
		{"POST", "/api/projects", map[string]string{"name": strings.Repeat("n", 201)}, "name"},
		{"PATCH", path, map[string]any{"branding": map[string]string{"logo_url": "javascript:alert(1)"}}, "branding.logo_url"},
		{"PATCH", path, map[string]any{"branding": map[string]string{"display_name": strings.Repeat("d", 201)}}, "branding.display_name"},
		{"PATCH", path, map[string]any{"branding": map[string]any{"colour": "red"}}, "colour"},
		{"POST", path + "/members", map[string]string{"email": "bob@example.com", "role": "admin"}, "role"},
		{"POST", path + "/members", map[string]string{"role": "viewer"}, "email"},
		{"POST", path + "/members", map[string]string{"email": "not an email", "role": "viewer"}, "email"},
	} {
		r := s.Do(t, tc.method, tc.path, tok, tc.body)
		if r.Status != 400 || !strings.Contains(string(r.Body), `"field":"`+tc.field+`"`) {
			t.Errorf("%s %s %v = %s, want 400 on %s", tc.method, tc.path, tc.body, r, tc.field)
		}
	}
	// Adding a member invites them; they are a member once they accept.
	var m agentline.Member
	var inv agentline.Invite
	s.Must(t, http.StatusAccepted, "POST", path+"/members", tok, map[string]string{"email": "BOB@example.com", "role": "viewer"}, &inv)
	var members []agentline.Member
	s.Must(t, 200, "GET", path+"/members", tok, nil, &members)
	if len(members) != 1 || inv.Email != "bob@example.com" || inv.Token == "" {
		t.Fatalf("after inviting: members %+v, invitation %+v", members, inv)
	}
	s.Must(t, http.StatusOK, "POST", "/api/invites/accept", bobTok, map[string]string{"token": inv.Token}, nil)
	s.Must(t, 200, "GET", path+"/members", tok, nil, &members)
	s.Must(t, http.StatusOK, "PATCH", path+"/members/"+itoa(members[1].UserID), tok, map[string]string{"role": "owner"}, &m)
	if m.Role != agentline.RoleOwner || m.Email != "bob@example.com" {
		t.Fatalf("member = %+v", m)
	}
	s.Must(t, 200, "GET", path+"/members", tok, nil, &members)
	if len(members) != 2 || members[0].Email != "ann@example.com" || members[0].Role != agentline.RoleOwner {
		t.Fatalf("members = %+v", members)
	}
	// With two owners, one may leave.
	s.Must(t, 204, "DELETE", path+"/members/"+itoa(members[0].UserID), tok, nil, nil)
	s.Must(t, 404, "GET", path, tok, nil, nil)
}
