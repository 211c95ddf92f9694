package app_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// In the sandbox, a Gemini-kind agent's run plays it over the sandbox's
// Live WebSocket, the one its calls use there: the script greets first,
// then calls the agent's webhook tool (run for real) and quotes its
// output; the answers are read from the output transcription, since a
// native-audio model speaks only.
func TestSandboxPlaysGeminiTestRun(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, "sqlite", map[string]string{"AGENTLINE_SANDBOX": "true", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	a, hits, _ := testRunSetup(t, s, tok)
	s.Must(t, 200, "PATCH", "/api/agents/"+itoa(a.ID), tok, map[string]any{"model": "gemini-2.5-flash-native-audio-preview-09-2025"}, nil)
	var run agentline.TestRun
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/test-runs", tok, map[string]any{}, &run)
	run = waitRun(t, s, tok, run.ID)
	if run.Passed != 2 || run.Failed != 1 || run.Errors != 0 || hits.Load() != 3 {
		t.Fatalf("run %+v, webhook hits %d", run, hits.Load())
	}
	for _, r := range run.Results {
		tr := r.Transcript
		if r.Turns != 2 || len(tr) != 4 || !strings.HasPrefix(tr[1].Text, "Hello! This is the agentline sandbox.") ||
			tr[3].Text != `The tool order_status answered: {"output":{"status":"shipped tomorrow"}}` || len(r.ToolCalls) != 1 || len(r.TurnMS) != 2 {
			t.Errorf("%s: %+v", r.ScenarioName, r)
		}
	}
}
