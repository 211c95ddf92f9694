package app_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// The versions API: every save of a setting is a version, the list is
// newest first, one version answers its settings and, with diff, the
// fields that changed; review_before_publish keeps saves as drafts until
// one is published; unknown versions are 404, a bad diff or n 400.
func TestAgentVersionsAPI(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		_, tok := s.NewUser(t, "owner@example.com")
		var p agentline.Project
		var a agentline.Agent
		s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
		s.Must(t, 201, "POST", fmt.Sprintf("/api/projects/%d/agents", p.ID), tok, map[string]string{"name": "Ada", "instructions": "One."}, &a)
		if a.Version != 1 || a.PublishedVersion != 1 || a.ReviewBeforePublish {
			t.Fatalf("new agent = %+v", a)
		}
		path := fmt.Sprintf("/api/agents/%d", a.ID)
		s.Must(t, 200, "PATCH", path, tok, map[string]any{"instructions": "Two.", "voice": "cedar"}, &a)
		// A rename is no version: the name is not a conversational setting.
		s.Must(t, 200, "PATCH", path, tok, map[string]any{"name": "Ada B."}, &a)
		if a.Version != 2 || a.PublishedVersion != 2 {
			t.Fatalf("after a save and a rename = %+v", a)
		}
		var one struct {
			agentline.AgentVersion
			Diff struct {
				From, To int
				Changes  []struct {
					Field    string
					From, To json.RawMessage
				}
			}
		}
		s.Must(t, 200, "GET", path+"/versions/2?diff=1", tok, nil, &one)
		if one.Version != 2 || !one.Published || one.Settings.Instructions != "Two." || one.Diff.From != 1 || one.Diff.To != 2 ||
			len(one.Diff.Changes) != 2 || one.Diff.Changes[0].Field != "instructions" || one.Diff.Changes[1].Field != "voice" ||
			string(one.Diff.Changes[0].From) != `"One."` || string(one.Diff.Changes[0].To) != `"Two."` {
			t.Fatalf("version 2 with diff = %+v", one)
		}

		// Review before publishing: saves are drafts the editor reads back,
		// until one is published; then rollback.
		s.Must(t, 200, "PATCH", path, tok, map[string]any{"review_before_publish": true, "instructions": "Three (draft)."}, &a)
		if a.Version != 3 || a.PublishedVersion != 2 || a.Instructions != "Three (draft)." || !a.ReviewBeforePublish {
			t.Fatalf("draft save = %+v", a)
		}
		s.Must(t, 200, "GET", path, tok, nil, &a)
		if a.Instructions != "Three (draft)." || a.PublishedVersion != 2 {
			t.Fatalf("GET after a draft = %+v", a)
		}
		var list struct {
			Versions   []agentline.AgentVersion
			NextCursor *string `json:"next_cursor"`
		}
		s.Must(t, 200, "GET", path+"/versions", tok, nil, &list)
		if len(list.Versions) != 3 || list.Versions[0].Version != 3 || list.Versions[0].Published || !list.Versions[1].Published || list.NextCursor != nil {
			t.Fatalf("versions = %+v", list)
		}
		s.Must(t, 200, "POST", path+"/versions/3/publish", tok, nil, &a)
		if a.PublishedVersion != 3 {
			t.Fatalf("publish 3 = %+v", a)
		}
		s.Must(t, 200, "POST", path+"/versions/1/publish", tok, nil, &a)
		if a.PublishedVersion != 1 || a.Version != 3 || a.Instructions != "Three (draft)." {
			t.Fatalf("rollback to 1 = %+v", a)
		}

		for _, c := range []struct {
			method, url string
			status      int
			field       string
		}{
			{"GET", path + "/versions/9", 404, ""},
			{"GET", path + "/versions/2?diff=9", 404, ""},
			{"POST", path + "/versions/9/publish", 404, ""},
			{"GET", path + "/versions/2?diff=x", 400, "diff"},
			{"GET", path + "/versions/2?diff=0", 400, "diff"},
			{"GET", path + "/versions/2?diff=", 400, "diff"},
			{"GET", path + "/versions/two", 400, "n"},
			{"POST", path + "/versions/0/publish", 400, "n"},
			{"GET", path + "/versions?cursor=bad", 400, "cursor"},
		} {
			r := s.Do(t, c.method, c.url, tok, nil)
			var e struct{ Error agentline.Error }
			json.Unmarshal(r.Body, &e)
			if r.Status != c.status || e.Error.Field != c.field {
				t.Errorf("%s %s = %s, want %d naming %q", c.method, c.url, r, c.status, c.field)
			}
		}
	})
}
