package app_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// A test run survives a restart mid-run: the app stops while every
// scenario waits on its webhook tool; the run stays running, and after
// the restart each scenario is played again from its start (a second
// attempt) and the run completes with the expected outcomes.
func TestTestRunSurvivesRestart(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	var blocking atomic.Bool
	blocking.Store(true)
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hits.Add(1)
		if blocking.Load() {
			select {
			case <-r.Context().Done():
				return
			case <-release:
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"shipped tomorrow"}`)
	}))
	defer hook.Close()
	defer close(release)
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentline.db")
	env := map[string]string{"AGENTLINE_SANDBOX": "true", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true", "AGENTLINE_SHUTDOWN_TIMEOUT": "1s"}
	s := apptest.Start(t, apptest.Config(t, db, env))
	_, tok := s.NewUser(t, "owner@example.com")
	a, _, _ := testRunSetupWith(t, s, tok, hook.URL)
	var run agentline.TestRun
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/test-runs", tok, map[string]any{}, &run)
	for i := 0; hits.Load() < 3; i++ {
		if i > 400 {
			t.Fatalf("the scenarios did not reach their tool call: %d hits", hits.Load())
		}
		time.Sleep(25 * time.Millisecond)
	}
	addr := s.URL[len("http://"):]
	s.Stop(t)
	blocking.Store(false)
	s = apptest.StartAt(t, apptest.Config(t, db, env), addr)
	tok = s.Login(t, "owner@example.com", apptest.Password)
	var mid agentline.TestRun
	s.Must(t, 200, "GET", "/api/test-runs/"+itoa(run.ID), tok, nil, &mid)
	if mid.Status == agentline.TestRunCompleted && mid.Results[0].Attempts < 2 {
		t.Fatalf("the run completed without replaying its scenarios: %+v", mid)
	}
	run = waitRun(t, s, tok, run.ID)
	if run.Passed != 2 || run.Failed != 1 || run.Errors != 0 {
		t.Fatalf("after the restart: %+v", run)
	}
	for _, r := range run.Results {
		if r.Attempts != 2 || r.Turns != 2 || len(r.ToolCalls) != 1 {
			t.Fatalf("%s: %d attempts, %d turns, %d tool calls; want 2, 2, 1 (played again from its start)", r.ScenarioName, r.Attempts, r.Turns, len(r.ToolCalls))
		}
	}
	if hits.Load() != 6 {
		t.Fatalf("webhook hits %d, want 3 before the restart and 3 after", hits.Load())
	}
}
