package app_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
)

// A Gemini-kind agent's test run of four turns whose Live connections the
// service sends goAway: during turn 2 (the turn ends on the old
// connection, turn 3 goes on a new one resuming the session from the
// handle given after turn 2), and during turn 3 on the second connection,
// which then closes before it answers (the session resumes on a third and
// turn 3 is sent again). The run completes with all four turns answered.
func TestGeminiTestRunResumesAfterGoAway(t *testing.T) {
	t.Parallel()
	live, text, providers := geminiTestRunProviders(t)
	// The person says "message N" for N = 1..4; max_turns ends the scenario.
	text.Say(func(_, input string) string {
		return "message " + strconv.Itoa(strings.Count(input, "Agent: ")+1)
	})
	text.Answer(func(map[string]any, string) any {
		return map[string]any{"success": true, "success_reason": "The agent answered every message."}
	})
	live.OnSession = func(ctx context.Context, ss *geminilivefake.Session) {
		n := len(live.Sessions())
		ss.PlayText(ctx, func(in geminilivefake.TextInput) geminilivefake.TextReply {
			switch {
			case n == 1 && in.User == "message 2":
				ss.SendGoAway(ctx, 0)
			case n == 2 && in.User == "message 3":
				ss.SendGoAway(ctx, 0)
				ss.Close(websocket.StatusGoingAway, "")
			}
			return geminilivefake.TextReply{Text: "Heard " + in.User}
		})
	}
	s := apptest.StartFresh(t, "sqlite", map[string]string{"GEMINI_API_KEY": "g-test", "GEMINI_BASE_URL": providers.URL})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "instructions": "Listen."}, &a)
	s.Must(t, 200, "PATCH", "/api/agents/"+itoa(a.ID), tok, map[string]any{"model": "gemini-2.5-flash-native-audio-preview-09-2025"}, nil)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/scenarios", tok, map[string]any{"name": "long", "persona": "A customer",
		"goal": "Talk for four turns", "success_criteria": "Every message is answered.", "max_turns": 4}, nil)
	var run agentline.TestRun
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/test-runs", tok, map[string]any{}, &run)
	run = waitRun(t, s, tok, run.ID)
	if run.Passed != 1 || run.Errors != 0 || len(run.Results) != 1 {
		t.Fatalf("run %+v", run)
	}
	r := run.Results[0]
	if r.Turns != 4 || len(r.Transcript) != 8 {
		t.Fatalf("result %+v", r)
	}
	for i := range 4 {
		msg := "message " + strconv.Itoa(i+1)
		if r.Transcript[2*i].Text != msg || r.Transcript[2*i+1].Text != "Heard "+msg {
			t.Errorf("turn %d: %q, %q", i+1, r.Transcript[2*i].Text, r.Transcript[2*i+1].Text)
		}
	}
	sessions := live.Sessions()
	texts := [][]string{{"message 1", "message 2"}, {"message 3"}, {"message 3", "message 4"}}
	if len(sessions) != len(texts) {
		t.Fatalf("%d Live connections, want %d", len(sessions), len(texts))
	}
	for i, ss := range sessions {
		if !slices.Equal(ss.Texts(), texts[i]) {
			t.Errorf("connection %d took %q, want %q", i+1, ss.Texts(), texts[i])
		}
		if i > 0 && (ss.Resumed() == "" || !slices.ContainsFunc(sessions[i-1].Sent(), func(m []byte) bool {
			return strings.Contains(string(m), `"newHandle":"`+ss.Resumed()+`"`)
		})) {
			t.Errorf("connection %d resumed %q, not a handle of connection %d", i+1, ss.Resumed(), i)
		}
	}
}
