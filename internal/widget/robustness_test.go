package widget_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/widget"
)

// Every route of the package, with bad ids, another tenant's ids, no key or
// token and bad bodies, answers below 500 and errors in the JSON shape with
// the status httpx maps their code to.
func TestEveryRouteSurvivesBadInput(t *testing.T) {
	e := newEnv(t, envOptions{})
	var theirs, mine struct{ ID int64 }
	e.do("POST", "/api/projects/"+itoa(e.other.ID)+"/channels", e.owner, "", map[string]any{"type": "form", "name": "theirs"}, 201, &theirs)
	e.do("POST", "/api/projects/"+itoa(e.project.ID)+"/channels", e.owner, "", map[string]any{"type": "form", "name": "mine"}, 201, &mine)
	_, outsider := e.newUser("outsider@example.com")
	ids := []string{"abc", "-1", "0", "99999999999999999999", strings.Repeat("9", 500), "987654321"}
	bodies := []string{``, `null`, `[]`, `{"name":`, `{"name":5,"agent_id":"x","settings":[],"allowed_origins":{},"events":7}`,
		`{"no_such_field":1}`, `{}`, `{"a":"` + strings.Repeat("x", 2<<20) + `"}`}
	routes := widget.New(widget.Options{Store: e.counting}).Routes()
	for _, r := range routes {
		var paths []string
		for _, id := range ids {
			p := strings.NewReplacer("{project_id}", id, "{channel_id}", id).Replace(r.Pattern)
			paths = append(paths, p)
		}
		paths = append(paths,
			strings.NewReplacer("{project_id}", itoa(e.other.ID), "{channel_id}", itoa(theirs.ID)).Replace(r.Pattern),
			strings.NewReplacer("{project_id}", itoa(e.project.ID), "{channel_id}", itoa(mine.ID)).Replace(r.Pattern))
		for _, path := range paths {
			for _, body := range bodies {
				for _, auth := range [][2]string{{"", ""}, {e.viewer, ""}, {e.owner, ""}, {outsider, ""}, {"", e.key}, {"", "svc_pk_" + strings.Repeat("z", 40)}} {
					req, _ := http.NewRequest(r.Method, e.srv.URL+path, strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					if auth[0] != "" {
						req.Header.Set("Authorization", "Bearer "+auth[0])
					}
					if auth[1] != "" {
						req.Header.Set("X-API-Key", auth[1])
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					where := r.Method + " " + path[:min(len(path), 60)] + " body " + body[:min(len(body), 30)]
					if resp.StatusCode >= 500 {
						t.Fatalf("%s: %d %s", where, resp.StatusCode, raw)
					}
					if resp.StatusCode < 400 {
						continue
					}
					if strings.Contains(r.Pattern, "/embed") {
						// A page for a browser frame: its errors are HTML.
						if (resp.StatusCode != 401 && resp.StatusCode != 404) || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !bytes.Contains(raw, []byte(`role="alert"`)) {
							t.Fatalf("%s: want a 401 or 404 HTML page, got %d %s", where, resp.StatusCode, raw)
						}
						continue
					}
					var eb httpx.ErrorBody
					if err := json.Unmarshal(raw, &eb); err != nil || eb.Error.Code == "" || eb.Error.Message == "" || httpx.Status(eb.Error.Code) != resp.StatusCode {
						t.Fatalf("%s: %d %s", where, resp.StatusCode, bytes.TrimSpace(raw))
					}
				}
			}
		}
	}
}
