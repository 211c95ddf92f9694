package app_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// permissionFixture: owner made project "Shop" with agent Ada and added
// editor and viewer; newcomer has an account but no role; outsider owns
// project "Elsewhere" with agent Eve. IDs: project_id, agent_id, user_id
// (the newcomer, for member removal), owner_id, and other_project_id,
// other_agent_id of the outsider.
func permissionFixture(t *testing.T, s *apptest.Server) apptest.Fixture {
	t.Helper()
	f := apptest.Fixture{Tokens: map[string]string{}, IDs: map[string]int64{}}
	users := map[string]agentline.User{}
	for _, name := range []string{"owner", "editor", "viewer", "outsider", "newcomer", "leaver"} {
		users[name], f.Tokens[name] = s.NewUser(t, name+"@example.com")
	}
	var p, q agentline.Project
	var a, b agentline.Agent
	s.Must(t, http.StatusCreated, "POST", "/api/projects", f.Tokens["owner"], map[string]string{"name": "Shop"}, &p)
	s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(p.ID)+"/agents", f.Tokens["owner"], map[string]string{"name": "Ada"}, &a)
	for _, r := range []string{"editor", "viewer"} {
		s.Join(t, f.Tokens["owner"], p.ID, f.Tokens[r], r+"@example.com", agentline.Role(r))
	}
	s.Join(t, f.Tokens["owner"], p.ID, f.Tokens["leaver"], "leaver@example.com", agentline.RoleViewer)
	s.Must(t, http.StatusCreated, "POST", "/api/projects", f.Tokens["outsider"], map[string]string{"name": "Elsewhere"}, &q)
	s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(q.ID)+"/agents", f.Tokens["outsider"], map[string]string{"name": "Eve"}, &b)
	f.IDs["project_id"], f.IDs["agent_id"] = p.ID, a.ID
	f.IDs["user_id"], f.IDs["owner_id"], f.IDs["leaver_id"] = users["newcomer"].ID, users["owner"].ID, users["leaver"].ID
	f.IDs["other_project_id"], f.IDs["other_agent_id"] = q.ID, b.ID
	var tool struct{ ID int64 }
	s.Must(t, http.StatusCreated, "POST", "/api/agents/"+itoa(a.ID)+"/tools", f.Tokens["owner"],
		map[string]string{"name": "lookup", "url": "https://hooks.example.com/x"}, &tool)
	f.IDs["tool_id"] = tool.ID
	return f
}

// every returns one scenario per actor with that actor's status.
func every(method, url string, body any, status map[string]int) []apptest.Scenario {
	var out []apptest.Scenario
	for _, as := range []string{"viewer", "editor", "outsider", "owner"} {
		want, ok := status[as]
		if !ok {
			continue
		}
		sc := apptest.Scenario{Method: method, URL: url, As: as, Body: body, Status: want}
		switch want {
		case http.StatusForbidden:
			// A refusal says in plain words who may, never
			// the permission's name.
			sc.Code, sc.NotContains = agentline.EForbidden, []string{"PROJECT:", "does not grant"}
			sc.Contains = []string{map[string]string{"viewer": "iewer", "editor": "Only owners can"}[as]}
		case http.StatusNotFound:
			// Another tenant's object: 404, and nothing about it leaks.
			sc.Code, sc.NotContains = agentline.ENotFound, []string{"Shop", "Ada", "Elsewhere", "Eve"}
		}
		out = append(out, sc)
	}
	return out
}

// readers may view; writers (owner, editor) may create and update; only
// the owner may delete and manage members. A non-member gets 404.
var (
	readers  = map[string]int{"viewer": 200, "editor": 200, "owner": 200, "outsider": 404}
	writers  = map[string]int{"viewer": 403, "editor": 200, "owner": 200, "outsider": 404}
	creators = map[string]int{"viewer": 403, "editor": 201, "owner": 201, "outsider": 404}
	// Deletes by everyone but the owner are refused; the owner's own
	// delete comes last in the table, once the refusals have been checked.
	refusedDeletes = map[string]int{"viewer": 403, "editor": 403, "outsider": 404}
)

func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		f := permissionFixture(t, s)

		var table []apptest.Scenario
		add := func(sc ...apptest.Scenario) { table = append(table, sc...) }
		add(
			apptest.Scenario{Method: "GET", URL: "/api/projects", As: "viewer", Status: 200, Contains: []string{`"name":"Shop"`, `"role":"viewer"`}},
			apptest.Scenario{Method: "GET", URL: "/api/projects", As: "outsider", Status: 200, Contains: []string{"Elsewhere"}, NotContains: []string{"Shop"}},
			apptest.Scenario{Method: "GET", URL: "/api/projects", As: "newcomer", Status: 200, Contains: []string{"[]"}},
			apptest.Scenario{Method: "POST", URL: "/api/projects", As: "viewer", Body: map[string]string{"name": "Mine"}, Status: 201, Contains: []string{`"role":"owner"`}},
		)
		add(every("GET", "/api/projects/{project_id}", nil, readers)...)
		// The MCP server takes API keys alone: a member's session token is
		// refused whatever the role (its keys: TestAPIKeyPermissionMatrix,
		// its tools' roles: TestMCPServerBuildsAndInspectsAgents).
		add(every("POST", "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
			map[string]int{"viewer": 401, "editor": 401, "owner": 401, "outsider": 401})...)
		add(every("PATCH", "/api/projects/{project_id}", map[string]string{"name": "Shop"}, writers)...)
		add(every("GET", "/api/projects/{project_id}/members", nil, readers)...)
		// Adding a member invites them (202); they join by accepting.
		add(every("POST", "/api/projects/{project_id}/members", map[string]string{"email": "newcomer@example.com", "role": "viewer"},
			map[string]int{"viewer": 403, "editor": 403, "outsider": 404, "owner": 202})...)
		add(every("PATCH", "/api/projects/{project_id}/members/{user_id}", map[string]string{"role": "owner"},
			map[string]int{"viewer": 403, "editor": 403, "outsider": 404})...)
		// Managing members is refused in the words of what was tried.
		for _, sc := range []apptest.Scenario{
			{Method: "PATCH", URL: "/api/projects/{project_id}/members/{user_id}", As: "editor", Body: map[string]string{"role": "owner"},
				Contains: []string{"Only owners can change roles", "you are an editor"}},
			{Method: "DELETE", URL: "/api/projects/{project_id}/members/{leaver_id}", As: "viewer", Contains: []string{"Only owners can remove members", "you are a viewer"}},
			{Method: "POST", URL: "/api/projects/{project_id}/invites", As: "editor", Body: map[string]string{"email": "x@example.com", "role": "viewer"},
				Contains: []string{"Only owners can invite people"}},
			{Method: "DELETE", URL: "/api/projects/{project_id}", As: "editor", Contains: []string{"Only owners can delete", "you are an editor"}},
			{Method: "POST", URL: "/api/projects/{project_id}/agents", As: "viewer", Body: map[string]string{"name": "Bo"},
				Contains: []string{"Viewers can only read", "editor or owner"}},
		} {
			sc.Status, sc.Code = http.StatusForbidden, agentline.EForbidden
			add(sc)
		}
		add(
			// The last owner can be neither removed nor demoted.
			apptest.Scenario{Method: "DELETE", URL: "/api/projects/{project_id}/members/{owner_id}", As: "owner", Status: 409, Code: agentline.EConflict},
			apptest.Scenario{Method: "PATCH", URL: "/api/projects/{project_id}/members/{owner_id}", As: "owner", Body: map[string]string{"role": "editor"}, Status: 409, Code: agentline.EConflict},
			apptest.Scenario{Method: "PATCH", URL: "/api/projects/{project_id}/members/{leaver_id}", As: "owner", Body: map[string]string{"role": "viewer"}, Status: 200},
		)
		add(every("DELETE", "/api/projects/{project_id}/members/{leaver_id}", nil, refusedDeletes)...)
		add(apptest.Scenario{Method: "DELETE", URL: "/api/projects/{project_id}/members/{leaver_id}", As: "owner", Status: 204})
		add(apptest.Scenario{Method: "DELETE", URL: "/api/projects/{project_id}/members/{leaver_id}", As: "owner", Status: 404, Code: agentline.ENotFound})
		// A newcomer who never accepted is no member to change or remove.
		add(apptest.Scenario{Method: "PATCH", URL: "/api/projects/{project_id}/members/{user_id}", As: "owner", Body: map[string]string{"role": "owner"}, Status: 404, Code: agentline.ENotFound})

		add(every("GET", "/api/projects/{project_id}/agents", nil, readers)...)
		add(every("POST", "/api/projects/{project_id}/agents", map[string]string{"name": "Bo"}, creators)...)
		add(every("GET", "/api/agents/{agent_id}", nil, readers)...)
		add(every("PATCH", "/api/agents/{agent_id}", map[string]string{"greeting": "Hi"}, writers)...)
		// Versions: viewers read them; publishing (and rolling back) is an
		// edit of the agent, for editors and owners.
		add(every("GET", "/api/agents/{agent_id}/versions", nil, readers)...)
		add(every("GET", "/api/agents/{agent_id}/versions/1", nil, readers)...)
		add(every("GET", "/api/agents/{agent_id}/versions/2?diff=1", nil, readers)...)
		add(every("POST", "/api/agents/{agent_id}/versions/1/publish", nil, writers)...)
		// "List tools" of an MCP source is a read; a webhook tool has none
		// to list (400), another tenant's tool is not there (404).
		add(every("GET", "/api/tools/{tool_id}/mcp-tools", nil, map[string]int{"viewer": 400, "editor": 400, "owner": 400, "outsider": 404})...)

		// The owner of this project is an outsider to the other one.
		for _, sc := range []apptest.Scenario{
			{Method: "GET", URL: "/api/projects/{other_project_id}"},
			{Method: "PATCH", URL: "/api/projects/{other_project_id}", Body: map[string]string{"name": "x"}},
			{Method: "DELETE", URL: "/api/projects/{other_project_id}"},
			{Method: "GET", URL: "/api/projects/{other_project_id}/members"},
			{Method: "POST", URL: "/api/projects/{other_project_id}/members", Body: map[string]string{"email": "owner@example.com", "role": "owner"}},
			{Method: "PATCH", URL: "/api/projects/{other_project_id}/members/{owner_id}", Body: map[string]string{"role": "owner"}},
			{Method: "GET", URL: "/api/projects/{other_project_id}/agents"},
			{Method: "POST", URL: "/api/projects/{other_project_id}/agents", Body: map[string]string{"name": "x"}},
			{Method: "GET", URL: "/api/agents/{other_agent_id}"},
			{Method: "PATCH", URL: "/api/agents/{other_agent_id}", Body: map[string]string{"name": "x"}},
			{Method: "DELETE", URL: "/api/agents/{other_agent_id}"},
			{Method: "GET", URL: "/api/agents/{other_agent_id}/versions"},
			{Method: "GET", URL: "/api/agents/{other_agent_id}/versions/1"},
			{Method: "POST", URL: "/api/agents/{other_agent_id}/versions/1/publish"},
		} {
			sc.As, sc.Status, sc.Code, sc.NotContains = "owner", 404, agentline.ENotFound, []string{"Elsewhere", "Eve"}
			add(sc)
		}

		// Channels, their key, and the sessions and analytics views.
		var ch agentline.Channel
		s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(f.IDs["project_id"])+"/channels", f.Tokens["owner"],
			map[string]any{"type": "voice_widget", "name": "Site", "agent_id": f.IDs["agent_id"]}, &ch)
		f.IDs["channel_id"] = ch.ID
		add(every("GET", "/api/projects/{project_id}/channels", nil, readers)...)
		add(every("POST", "/api/projects/{project_id}/channels", map[string]string{"type": "form", "name": "Leads"}, creators)...)
		add(every("GET", "/api/channels/{channel_id}", nil, readers)...)
		add(every("PATCH", "/api/channels/{channel_id}", map[string]string{"name": "Site"}, writers)...)
		add(every("POST", "/api/channels/{channel_id}/key", nil, creators)...)
		add(every("GET", "/api/channels/{channel_id}/key", nil, readers)...)
		add(every("PATCH", "/api/channels/{channel_id}/key", map[string]int{"rate_limit_per_minute": 30}, writers)...)
		add(every("GET", "/api/projects/{project_id}/sessions", nil, readers)...)
		add(every("GET", "/api/projects/{project_id}/analytics", nil, readers)...)
		add(every("DELETE", "/api/channels/{channel_id}/key", nil, refusedDeletes)...)
		add(apptest.Scenario{Method: "DELETE", URL: "/api/channels/{channel_id}/key", As: "owner", Status: 204})
		add(every("DELETE", "/api/channels/{channel_id}", nil, refusedDeletes)...)
		add(apptest.Scenario{Method: "DELETE", URL: "/api/channels/{channel_id}", As: "owner", Status: 204})

		// Campaigns, their contacts and the do-not-call list.
		var camp, otherCamp agentline.Campaign
		s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(f.IDs["project_id"])+"/campaigns", f.Tokens["owner"],
			map[string]any{"name": "Renewals", "agent_id": f.IDs["agent_id"]}, &camp)
		s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(f.IDs["other_project_id"])+"/campaigns", f.Tokens["outsider"],
			map[string]any{"name": "Elsewhere", "agent_id": f.IDs["other_agent_id"]}, &otherCamp)
		f.IDs["campaign_id"], f.IDs["other_campaign_id"] = camp.ID, otherCamp.ID
		contacts := []map[string]string{{"phone_number": "+14155550101"}}
		add(every("GET", "/api/projects/{project_id}/campaigns", nil, readers)...)
		add(every("POST", "/api/projects/{project_id}/campaigns", map[string]any{"name": "More", "agent_id": f.IDs["agent_id"]}, creators)...)
		add(every("GET", "/api/campaigns/{campaign_id}", nil, readers)...)
		add(every("PATCH", "/api/campaigns/{campaign_id}", map[string]any{"max_attempts": 2}, writers)...)
		add(every("POST", "/api/campaigns/{campaign_id}/contacts", contacts, writers)...)
		add(every("GET", "/api/campaigns/{campaign_id}/contacts", nil, readers)...)
		add(every("GET", "/api/campaigns/{campaign_id}/contacts.csv", nil, readers)...)
		// Without a number the start is refused, but only after the role.
		add(every("POST", "/api/campaigns/{campaign_id}/start", nil, map[string]int{"viewer": 403, "editor": 409, "outsider": 404, "owner": 409})...)
		add(every("POST", "/api/campaigns/{campaign_id}/pause", nil, map[string]int{"viewer": 403, "editor": 409, "outsider": 404, "owner": 409})...)
		add(every("POST", "/api/campaigns/{campaign_id}/resume", nil, map[string]int{"viewer": 403, "editor": 409, "outsider": 404, "owner": 409})...)
		add(every("POST", "/api/campaigns/{campaign_id}/cancel", nil, map[string]int{"viewer": 403, "editor": 200, "outsider": 404, "owner": 409})...)
		add(every("GET", "/api/projects/{project_id}/dnc", nil, readers)...)
		add(every("POST", "/api/projects/{project_id}/dnc", map[string]string{"phone_number": "+14155550101"},
			map[string]int{"viewer": 403, "editor": 201, "outsider": 404, "owner": 200})...)
		add(every("DELETE", "/api/projects/{project_id}/dnc/+14155550101", nil, refusedDeletes)...)
		add(apptest.Scenario{Method: "DELETE", URL: "/api/projects/{project_id}/dnc/+14155550101", As: "owner", Status: 204})
		// Provider accounts: every member sees them (key_last4 only), only
		// owners set or remove one. The owner's set is refused for its
		// empty key, past the role check (this server has no provider).
		pa := "/api/projects/{project_id}/providers"
		add(every("GET", pa, nil, readers)...)
		add(every("PUT", pa+"/openai", map[string]string{"api_key": "sk-some-key-0000"}, map[string]int{"viewer": 403, "editor": 403, "outsider": 404})...)
		add(apptest.Scenario{Method: "PUT", URL: pa + "/openai", As: "owner", Body: map[string]string{"api_key": ""}, Status: 400, Code: agentline.EInvalid})
		add(every("GET", pa+"/openai", nil, map[string]int{"viewer": 404, "editor": 404, "owner": 404, "outsider": 404})...)
		add(every("DELETE", pa+"/openai", nil, refusedDeletes)...)
		add(apptest.Scenario{Method: "DELETE", URL: pa + "/openai", As: "owner", Status: 404, Code: agentline.ENotFound})
		for _, sc := range []apptest.Scenario{
			{Method: "GET", URL: "/api/projects/{other_project_id}/providers"},
			{Method: "GET", URL: "/api/projects/{other_project_id}/providers/openai"},
			{Method: "PUT", URL: "/api/projects/{other_project_id}/providers/openai", Body: map[string]string{"api_key": "sk-some-key-0000"}},
			{Method: "DELETE", URL: "/api/projects/{other_project_id}/providers/openai"},
		} {
			sc.As, sc.Status, sc.Code, sc.NotContains = "owner", 404, agentline.ENotFound, []string{"Elsewhere", "Eve"}
			add(sc)
		}
		add(every("DELETE", "/api/campaigns/{campaign_id}", nil, refusedDeletes)...)
		add(apptest.Scenario{Method: "DELETE", URL: "/api/campaigns/{campaign_id}", As: "owner", Status: 204})
		add(testRunScenarios(t, s, f)...)
		add(auditLogScenarios()...)
		for _, sc := range []apptest.Scenario{
			{Method: "GET", URL: "/api/projects/{other_project_id}/campaigns"},
			{Method: "POST", URL: "/api/projects/{other_project_id}/campaigns", Body: map[string]any{"name": "x", "agent_id": f.IDs["other_agent_id"]}},
			{Method: "GET", URL: "/api/campaigns/{other_campaign_id}"},
			{Method: "PATCH", URL: "/api/campaigns/{other_campaign_id}", Body: map[string]any{"name": "x"}},
			{Method: "DELETE", URL: "/api/campaigns/{other_campaign_id}"},
			{Method: "POST", URL: "/api/campaigns/{other_campaign_id}/cancel"},
			{Method: "POST", URL: "/api/campaigns/{other_campaign_id}/contacts", Body: contacts},
			{Method: "GET", URL: "/api/campaigns/{other_campaign_id}/contacts.csv"},
			{Method: "GET", URL: "/api/projects/{other_project_id}/dnc"},
			{Method: "POST", URL: "/api/projects/{other_project_id}/dnc", Body: map[string]string{"phone_number": "+14155550101"}},
		} {
			sc.As, sc.Status, sc.Code, sc.NotContains = "owner", 404, agentline.ENotFound, []string{"Elsewhere", "Eve"}
			add(sc)
		}

		add(every("DELETE", "/api/agents/{agent_id}", nil, refusedDeletes)...)
		add(apptest.Scenario{Method: "DELETE", URL: "/api/agents/{agent_id}", As: "owner", Status: 204})
		add(apptest.Scenario{Method: "GET", URL: "/api/agents/{agent_id}", As: "owner", Status: 404, Code: agentline.ENotFound})
		add(every("DELETE", "/api/projects/{project_id}", nil, refusedDeletes)...)
		add(apptest.Scenario{Method: "DELETE", URL: "/api/projects/{project_id}", As: "owner", Status: 204})
		add(apptest.Scenario{Method: "GET", URL: "/api/projects/{project_id}", As: "owner", Status: 404, Code: agentline.ENotFound})
		// The other tenant is untouched by all of the above.
		add(apptest.Scenario{Method: "GET", URL: "/api/agents/{other_agent_id}", As: "outsider", Status: 200, Contains: []string{`"name":"Eve"`}})

		for _, sc := range table {
			sc.Test(t, s, f)
		}
	})
}

// auditLogScenarios: a project's audit log is its owners' alone (with the
// changes of everyone, the owner's role change of a member above
// included); the instance's is its administrators', which no project role
// makes anyone.
func auditLogScenarios() []apptest.Scenario {
	owners := map[string]int{"viewer": 403, "editor": 403, "outsider": 404, "owner": 200}
	out := slices.Concat(every("GET", "/api/projects/{project_id}/audit-log", nil, owners),
		every("GET", "/api/projects/{project_id}/audit-log.csv", nil, owners))
	out = append(out,
		apptest.Scenario{Method: "GET", URL: "/api/projects/{project_id}/audit-log?action=member.role_change", As: "owner", Status: 200,
			Contains: []string{`"action":"member.role_change"`, `"email":"owner@example.com"`, `"role":["viewer","viewer"]`}},
		apptest.Scenario{Method: "GET", URL: "/api/projects/{project_id}/audit-log", As: "editor", Status: 403, Code: agentline.EForbidden,
			Contains: []string{"Only owners can read the audit log", "you are an editor"}},
		apptest.Scenario{Method: "GET", URL: "/api/projects/{other_project_id}/audit-log", As: "owner", Status: 404, Code: agentline.ENotFound,
			NotContains: []string{"Elsewhere", "Eve"}},
		apptest.Scenario{Method: "GET", URL: "/api/projects/{other_project_id}/audit-log.csv", As: "owner", Status: 404, Code: agentline.ENotFound})
	for _, path := range []string{"/api/admin/audit-log", "/api/admin/audit-log.csv"} {
		out = append(out, apptest.Scenario{Method: "GET", URL: path, As: "owner", Status: 403, Code: agentline.EForbidden,
			Contains: []string{"only instance administrators"}})
	}
	return out
}
