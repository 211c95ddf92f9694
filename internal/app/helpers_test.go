package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/webhooks"
)

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// acmeWithAda makes the owner the console tests sign in as
// (owner@example.com) with a project, Acme, holding one agent, Ada; it
// returns the owner's token, the project and the agent.
func acmeWithAda(t testing.TB, s *apptest.Server) (string, agentline.Project, agentline.Agent) {
	t.Helper()
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	return tok, p, a
}

// newApp builds an App without serving it; it is closed when the test ends.
func newApp(t testing.TB, cfg config.Config) (*app.App, error) {
	t.Helper()
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err == nil {
		t.Cleanup(func() { a.Close() })
	}
	return a, err
}

// webhookTool serves a webhook tool that answers every call with the JSON
// reply and hands each request body to hooked, which holds up to calls
// bodies. The server is closed when the test ends.
func webhookTool(t testing.TB, reply string, calls int) (url string, hooked <-chan string) {
	t.Helper()
	bodies := make(chan string, calls)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, bodies
}

// storeEndpoint stores an enabled webhook endpoint for every event of the
// project straight into the store, past the API's save-time address check:
// an endpoint at an address the connect-time guard refuses, as one saved
// before the policy (or a name that came to point inside) would be.
func storeEndpoint(t testing.TB, s *apptest.Server, projectID int64, url string) agentline.WebhookEndpoint {
	t.Helper()
	secret, err := webhooks.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.App.Store.CreateWebhook(context.Background(), agentline.WebhookEndpoint{
		ProjectID: projectID, URL: url, Events: []string{"*"}, Enabled: true, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
