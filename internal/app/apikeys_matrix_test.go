package app_test

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/httpx"
)

// peoplesRoute lists what keys never do, whatever their role: people's
// own routes and the management of members, invitations, API keys and
// provider accounts. It is written out here, apart from the code's rule,
// so that the two check each other.
func peoplesRoute(r httpx.Route) bool {
	if r.Method == "POST" && r.Pattern == "/api/projects" {
		return true
	}
	for _, p := range []string{"/api/me", "/api/auth/", "/api/admin/", "/members", "/invites", "/api-keys", "/providers"} {
		if strings.Contains(r.Pattern, p) {
			return true
		}
	}
	return false
}

// outcome is what a matrix compares: whether the request was refused
// (401, 403, 404, 429) or let through, whether it then succeeded or failed
// on its input or on the state an earlier request left (a campaign
// cancelled by the key cannot be cancelled again by the member).
func outcome(status int) string {
	switch status {
	case 401, 403, 404, 429:
		return fmt.Sprint(status)
	}
	return "let through"
}

// matrixPath fills a route's parameters with the fixture's objects, and
// with ids of nothing where the fixture has none (both askers then meet
// the same missing object).
func matrixPath(f apptest.Fixture, pattern string) string {
	fill := map[string]string{"kind": "openai", "call_sid": "CA00000000000000000000000000000000", "phone_number": "+14155550199"}
	for name, id := range f.IDs {
		fill[name] = itoa(id)
	}
	for {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			return pattern
		}
		j := strings.IndexByte(pattern, '}')
		v, ok := fill[pattern[i+1:j]]
		if !ok {
			v = "987654"
		}
		pattern = pattern[:i] + v + pattern[j+1:]
	}
}

// Every route of the route table, asked with an API key of each role, a
// key of another project, a revoked and an expired key: a key does just
// what a member of its role may do in its project (the same request by
// such a member passes or is refused alike), is a stranger to every other
// project, never does what only people do, and a dead key hears why. The
// routes come from the route table, so a new route cannot escape.
func TestAPIKeyPermissionMatrix(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		f := permissionFixture(t, s)
		var ch agentline.Channel
		s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(f.IDs["project_id"])+"/channels", f.Tokens["owner"],
			map[string]any{"type": "voice_widget", "name": "Site", "agent_id": f.IDs["agent_id"]}, &ch)
		var camp agentline.Campaign
		s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(f.IDs["project_id"])+"/campaigns", f.Tokens["owner"],
			map[string]any{"name": "Renewals", "agent_id": f.IDs["agent_id"]}, &camp)
		f.IDs["channel_id"], f.IDs["campaign_id"] = ch.ID, camp.ID
		keys := map[string]string{}
		for _, role := range []agentline.Role{agentline.RoleOwner, agentline.RoleEditor, agentline.RoleViewer} {
			keys[string(role)] = newKey(t, s, f.Tokens["owner"], f.IDs["project_id"], role).Key
		}
		// The other project's key is made by this project's owner, so
		// that only the key's binding, not its maker, keeps it out.
		var second agentline.Project
		s.Must(t, http.StatusCreated, "POST", "/api/projects", f.Tokens["owner"], map[string]string{"name": "Second"}, &second)
		keys["other"] = newKey(t, s, f.Tokens["owner"], second.ID, agentline.RoleOwner).Key
		revoked := newKey(t, s, f.Tokens["owner"], f.IDs["project_id"], agentline.RoleOwner)
		s.Must(t, 204, "DELETE", "/api/api-keys/"+itoa(revoked.ID), f.Tokens["owner"], nil, nil)
		expired := storeKey(t, s, f.IDs["project_id"], f.IDs["owner_id"], agentline.RoleOwner, time.Now().Add(-time.Second))

		// Deletes come last, the project's own very last, so that what
		// they remove is there for every other route.
		routes := s.App.RouteTable()
		last := func(r httpx.Route) int {
			if r.Method != "DELETE" {
				return 0
			}
			if r.Pattern == "/api/projects/{project_id}" {
				return 2
			}
			return 1
		}
		slices.SortStableFunc(routes, func(a, b httpx.Route) int { return cmp.Compare(last(a), last(b)) })
		checked := 0
		ask := func(r httpx.Route, tok string) *apptest.Response {
			var body any
			if r.Method == "POST" || r.Method == "PATCH" || r.Method == "PUT" {
				body = map[string]any{}
			}
			checked++
			return s.Do(t, r.Method, matrixPath(f, r.Pattern), tok, body)
		}
		for _, r := range routes {
			name := r.Method + " " + r.Pattern
			if r.Auth == httpx.APIKey {
				checkKeyOnlyRoute(t, r, ask, keys, f.Tokens, map[string]string{revoked.Key: "API key revoked", expired: "API key expired"})
				continue
			}
			if r.Auth != httpx.Session {
				// Such routes take no bearer token: a key gets what
				// anyone gets without one.
				if r.Method == "GET" && strings.Contains(r.Pattern, "{") {
					if got, want := ask(r, keys["owner"]), ask(r, ""); outcome(got.Status) != outcome(want.Status) {
						t.Errorf("%s with a key = %s, without = %s", name, got, want)
					}
				}
				continue
			}
			// A route that answers before anyone signs in (telephony
			// off) answers a dead key as it answers anyone.
			anonymous := ask(r, "")
			for dead, says := range map[string]string{revoked.Key: "API key revoked", expired: "API key expired"} {
				got := ask(r, dead)
				if anonymous.Status == 401 && (got.Status != 401 || !strings.Contains(string(got.Body), says)) ||
					anonymous.Status != 401 && outcome(got.Status) != outcome(anonymous.Status) {
					t.Errorf("%s with a dead key = %s, want 401 %q", name, got, says)
				}
			}
			other := ask(r, keys["other"])
			if peoplesRoute(r) {
				if other.Status != 403 || !strings.Contains(string(other.Body), "API keys cannot") {
					t.Errorf("%s with another project's key = %s, want 403", name, other)
				}
			} else if stranger := ask(r, f.Tokens["newcomer"]); outcome(other.Status) != outcome(stranger.Status) ||
				strings.Contains(string(other.Body), `"Shop"`) || strings.Contains(string(other.Body), `"Ada"`) {
				t.Errorf("%s with another project's key = %s, by a stranger = %s", name, other, stranger)
			}
			for _, role := range []string{"viewer", "editor", "owner"} {
				got := ask(r, keys[role])
				switch {
				case peoplesRoute(r):
					if got.Status != 403 || !strings.Contains(string(got.Body), "API keys cannot") {
						t.Errorf("%s with a %s key = %s, want 403", name, role, got)
					}
				case role == "owner" && r.Method == "DELETE":
					// The key's delete went first: the owner's own
					// would find nothing left.
					if got.Status == 401 || got.Status == 403 {
						t.Errorf("%s with an owner key = %s", name, got)
					}
				default:
					if member := ask(r, f.Tokens[role]); outcome(got.Status) != outcome(member.Status) {
						t.Errorf("%s with a %s key = %s, by a %s = %s", name, role, got, role, member)
					}
				}
			}
		}
		t.Logf("%d routes, %d requests", len(routes), checked)
	})
}

// checkKeyOnlyRoute: a route for API keys alone (the MCP server) lets in
// every live key, whatever its role or project (what it may do there is
// its project's and role's, TestMCPServerBuildsAndInspectsAgents), tells a
// dead key why it is refused, and refuses people's session tokens and
// requests without a token.
func checkKeyOnlyRoute(t *testing.T, r httpx.Route, ask func(httpx.Route, string) *apptest.Response, keys, tokens, dead map[string]string) {
	t.Helper()
	name := r.Method + " " + r.Pattern
	for who, key := range keys {
		if got := ask(r, key); outcome(got.Status) != "let through" {
			t.Errorf("%s with a live %s key = %s", name, who, got)
		}
	}
	for key, says := range dead {
		if got := ask(r, key); got.Status != 401 || !strings.Contains(string(got.Body), says) {
			t.Errorf("%s with a dead key = %s, want 401 %q", name, got, says)
		}
	}
	for _, who := range []string{"owner", "viewer", "newcomer"} {
		if got := ask(r, tokens[who]); got.Status != 401 || !strings.Contains(string(got.Body), "takes a project's API key") {
			t.Errorf("%s with the %s's session token = %s, want 401", name, who, got)
		}
	}
	if got := ask(r, ""); got.Status != 401 {
		t.Errorf("%s without a token = %s, want 401", name, got)
	}
}
