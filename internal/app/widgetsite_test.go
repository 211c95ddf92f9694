package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/store"
)

// widgetSite is one owner's project with an agent, a voice widget channel
// and its key, on a running app whose OpenAI-compatible provider is a fake.
type widgetSite struct {
	s           *apptest.Server
	provider    *providerfake.Fake // its requests: what sessions were offered
	providerSrv *httptest.Server
	token       string
	project     agentline.Project
	agent       agentline.Agent
	channel     agentline.Channel
	key         string
}

// siteOrigin is the allowed origin of every widgetSite's key.
const siteOrigin = "https://shop.example.com"

// startWidgetSite starts an app on a fresh database of dialect d with env
// plus a fake provider, and sets up a site on it.
func startWidgetSite(t testing.TB, d store.Dialect, env map[string]string) *widgetSite {
	t.Helper()
	fake := providerfake.New("sk-test", "g-test")
	providerSrv := httptest.NewServer(fake)
	t.Cleanup(providerSrv.Close)
	vars := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": providerSrv.URL, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"}
	for k, v := range env {
		vars[k] = v
	}
	s := apptest.StartFresh(t, d, vars)
	w := &widgetSite{s: s, provider: fake, providerSrv: providerSrv}
	_, w.token = s.NewUser(t, "owner@example.com")
	s.Must(t, 201, "POST", "/api/projects", w.token, map[string]string{"name": "Shop"}, &w.project)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(w.project.ID)+"/agents", w.token, map[string]string{"name": "Ada"}, &w.agent)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(w.project.ID)+"/channels", w.token,
		map[string]any{"type": "voice_widget", "name": "site", "agent_id": w.agent.ID}, &w.channel)
	var key struct{ Key string }
	s.Must(t, 201, "POST", "/api/channels/"+itoa(w.channel.ID)+"/key", w.token, map[string]any{"allowed_origins": []string{siteOrigin}}, &key)
	w.key = key.Key
	return w
}

// request builds a widget API request with the site's key and origin.
func (w *widgetSite) request(t testing.TB, method, path string, body any) *http.Request {
	t.Helper()
	req := w.s.Request(t, method, path, "", body)
	req.Header.Set("X-API-Key", w.key)
	req.Header.Set("Origin", siteOrigin)
	return req
}

// do sends a widget API request.
func (w *widgetSite) do(t testing.TB, method, path string, body any) *apptest.Response {
	t.Helper()
	return w.s.Send(t, w.request(t, method, path, body))
}

// session starts a widget session and returns its id.
func (w *widgetSite) session(t testing.TB) string {
	t.Helper()
	r := w.do(t, "POST", "/widget/v1/session", map[string]any{"agent_id": w.agent.ID})
	var out struct {
		SessionID string `json:"session_id"`
	}
	if r.Status != 201 || json.Unmarshal(r.Body, &out) != nil || out.SessionID == "" {
		t.Fatalf("session: %s", r)
	}
	return out.SessionID
}

// sessions lists the project's sessions as the console shows them.
func (w *widgetSite) sessions(t testing.TB) []listedSession {
	t.Helper()
	var out struct{ Sessions []listedSession }
	w.s.Must(t, 200, "GET", "/api/projects/"+itoa(w.project.ID)+"/sessions?limit=100", w.token, nil, &out)
	return out.Sessions
}

type listedSession struct {
	ID        string            `json:"id"`
	ToolCalls []json.RawMessage `json:"tool_calls"`
}
