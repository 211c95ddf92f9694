package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// newKey makes a key of role in project as tok's owner and returns it.
func newKey(t *testing.T, s *apptest.Server, tok string, projectID int64, role agentline.Role) agentline.APIKey {
	t.Helper()
	var k agentline.APIKey
	s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(projectID)+"/api-keys", tok,
		map[string]any{"name": "ci " + string(role), "role": role}, &k)
	return k
}

// A key is shown once; lists show its prefix and last use, never the key;
// revoked, expired and unknown keys each hear why they are refused.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		f := permissionFixture(t, s)
		pid := itoa(f.IDs["project_id"])
		k := newKey(t, s, f.Tokens["owner"], f.IDs["project_id"], agentline.RoleEditor)
		if !strings.HasPrefix(k.Key, "agl_sk_") || len(k.Key) < 40 || !strings.HasPrefix(k.Key, k.Prefix) || k.Prefix == k.Key {
			t.Fatalf("created key = %+v", k)
		}
		s.Must(t, 200, "GET", "/api/agents/"+itoa(f.IDs["agent_id"]), k.Key, nil, nil)
		r := s.Must(t, 200, "GET", "/api/projects/"+pid+"/api-keys", f.Tokens["viewer"], nil, nil)
		var list []agentline.APIKey
		r.JSON(t, &list)
		if len(list) != 1 || list[0].Prefix != k.Prefix || list[0].LastUsedAt == nil || strings.Contains(string(r.Body), k.Key) {
			t.Fatalf("list = %s", r)
		}
		for _, sc := range []struct {
			tok, method, url string
			body             any
			status           int
			says             string
		}{
			{f.Tokens["editor"], "POST", "/api/projects/" + pid + "/api-keys", map[string]any{"name": "x", "role": "viewer"}, 403, "Only owners can create API keys"},
			{k.Key, "POST", "/api/projects/" + pid + "/api-keys", map[string]any{"name": "x", "role": "viewer"}, 403, "API keys cannot"},
			{k.Key, "GET", "/api/projects/" + pid + "/members", nil, 403, "API keys cannot"},
			{k.Key, "GET", "/api/me", nil, 403, "API keys cannot"},
			{f.Tokens["owner"], "POST", "/api/projects/" + pid + "/api-keys", map[string]any{"name": "", "role": "viewer"}, 400, "name"},
			{f.Tokens["owner"], "POST", "/api/projects/" + pid + "/api-keys", map[string]any{"name": "x", "role": "admin"}, 400, "role"},
			{f.Tokens["owner"], "POST", "/api/projects/" + pid + "/api-keys", map[string]any{"name": "x", "role": "viewer", "expires_at": "2001-01-01T00:00:00Z"}, 400, "expires_at"},
			{f.Tokens["editor"], "DELETE", "/api/api-keys/" + itoa(k.ID), nil, 403, "Only owners can revoke API keys"},
			{f.Tokens["outsider"], "DELETE", "/api/api-keys/" + itoa(k.ID), nil, 404, "API key not found"},
			{f.Tokens["owner"], "DELETE", "/api/api-keys/" + itoa(k.ID), nil, 204, ""},
			{k.Key, "GET", "/api/agents/" + itoa(f.IDs["agent_id"]), nil, 401, "API key revoked"},
			{"agl_sk_nothing", "GET", "/api/projects", nil, 401, "invalid API key"},
		} {
			if r := s.Do(t, sc.method, sc.url, sc.tok, sc.body); r.Status != sc.status || !strings.Contains(string(r.Body), sc.says) {
				t.Errorf("%s %s = %s, want %d %q", sc.method, sc.url, r, sc.status, sc.says)
			}
		}
		expired := storeKey(t, s, f.IDs["project_id"], f.IDs["owner_id"], agentline.RoleOwner, time.Now().Add(-time.Minute))
		if r := s.Do(t, "GET", "/api/projects", expired, nil); r.Status != 401 || !strings.Contains(string(r.Body), "API key expired") {
			t.Errorf("expired key = %s", r)
		}
		// Guessing keys is throttled per client, as wrong passwords are.
		var r429 *apptest.Response
		for i := 0; i < 25 && (r429 == nil || r429.Status != 429); i++ {
			r429 = s.Do(t, "GET", "/api/projects", "agl_sk_guess"+itoa(int64(i)), nil)
		}
		if r429.Status != 429 || r429.ErrorCode() != agentline.ERateLimited || r429.Header.Get("Retry-After") == "" {
			t.Errorf("the 25th wrong key = %s", r429)
		}
	})
}

// storeKey writes a key straight into the store (an expired one cannot be
// made through the API) and returns it.
func storeKey(t *testing.T, s *apptest.Server, projectID, userID int64, role agentline.Role, expires time.Time) string {
	t.Helper()
	tok, err := auth.NewToken(agentline.APIKeyPrefix)
	if err != nil {
		t.Fatal(err)
	}
	k := agentline.APIKey{ProjectID: projectID, Name: "old", Role: role, Prefix: tok[:13], CreatedBy: userID, ExpiresAt: &expires}
	if _, err := s.App.Store.CreateAPIKey(context.Background(), k, auth.HashToken(tok)); err != nil {
		t.Fatal(err)
	}
	return tok
}

// Two instances on one PostgreSQL: a key revoked on one is refused by the
// other on its very next request.
func TestAPIKeyRevocationAcrossInstances(t *testing.T) {
	t.Parallel()
	cfg := apptest.Config(t, storetest.URL(t, store.Postgres), nil)
	a, b := apptest.Start(t, cfg), apptest.Start(t, cfg)
	owner := a.Admin(t)
	var p agentline.Project
	a.Must(t, http.StatusCreated, "POST", "/api/projects", owner, map[string]string{"name": "Shop"}, &p)
	k := newKey(t, a, owner, p.ID, agentline.RoleViewer)
	b.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID), k.Key, nil, nil)
	a.Must(t, 204, "DELETE", "/api/api-keys/"+itoa(k.ID), owner, nil, nil)
	if r := b.Do(t, "GET", "/api/projects/"+itoa(p.ID), k.Key, nil); r.Status != 401 || !strings.Contains(string(r.Body), "API key revoked") {
		t.Fatalf("revoked key on the other instance = %s", r)
	}
}
