package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/analysisfake"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
)

// A Gemini-kind agent's test run against fakes that speak the real wire
// protocols under one GEMINI_BASE_URL: the simulated person and the judge
// through generateContent, the agent through its own Live session
// (BidiGenerateContent) with its instructions and its webhook tool, which
// is run for real between the model's toolCall and its toolResponse. A
// model that gives text is asked for TEXT; a native-audio model, which
// refuses TEXT, answers in AUDIO and is read from its transcription. The
// messages of both kinds of session are checked against @google/genai's
// types.
func TestGeminiTestRunAgainstLiveFake(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ model, modality string }{
		{"gemini-live-2.5-flash-preview", "TEXT"},
		{"gemini-2.5-flash-native-audio-preview-09-2025", "AUDIO"},
	} {
		t.Run(tc.modality, func(t *testing.T) {
			t.Parallel()
			playGeminiRun(t, tc.model, tc.modality)
		})
	}
}

// geminiTestRunProviders serves a Gemini-kind test run's two providers
// under one base URL: the Live socket that plays the agent, and
// generateContent that plays the person and the judge.
func geminiTestRunProviders(t *testing.T) (*geminilivefake.Server, *analysisfake.Fake, *httptest.Server) {
	live := geminilivefake.New("g-test")
	t.Cleanup(live.Close)
	text := analysisfake.New("", "g-test")
	mux := http.NewServeMux()
	mux.Handle("/v1beta/models/", text)
	mux.Handle("/ws/", live)
	providers := httptest.NewServer(mux)
	t.Cleanup(providers.Close)
	return live, text, providers
}

func playGeminiRun(t *testing.T, model, modality string) {
	live, text, providers := geminiTestRunProviders(t)
	scriptPersonAndJudge(text)
	var sessions atomic.Int32
	live.OnSession = func(ctx context.Context, ss *geminilivefake.Session) {
		sessions.Add(1)
		ss.PlayText(ctx, func(in geminilivefake.TextInput) geminilivefake.TextReply {
			switch {
			case len(in.ToolOutputs) > 0:
				return geminilivefake.TextReply{Text: "Your order: " + in.ToolOutputs[0]}
			case strings.Contains(in.User, "A-17"):
				return geminilivefake.TextReply{Call: &geminilivefake.FunctionCall{Name: "order_status", Args: map[string]any{"order_id": "A-17"}}}
			}
			return geminilivefake.TextReply{Text: "Certainly: " + in.User}
		})
	}
	s := apptest.StartFresh(t, "sqlite", map[string]string{"GEMINI_API_KEY": "g-test", "GEMINI_BASE_URL": providers.URL,
		"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	a, hits, _ := testRunSetup(t, s, tok)
	s.Must(t, 200, "PATCH", "/api/agents/"+itoa(a.ID), tok, map[string]any{"model": model}, nil)
	var run agentline.TestRun
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/test-runs", tok, map[string]any{}, &run)
	run = waitRun(t, s, tok, run.ID)
	if run.Passed != 2 || run.Failed != 1 || run.Errors != 0 {
		t.Fatalf("run %+v", run)
	}
	byName := map[string]agentline.TestResult{}
	for _, r := range run.Results {
		byName[r.ScenarioName] = r
	}
	ships, refund, hours := byName["ships"], byName["refund"], byName["hours"]
	if ships.Turns != 1 || len(ships.Transcript) != 2 || ships.Transcript[0].Text != "Learn when order A-17 ships" ||
		ships.Transcript[1].Text != `Your order: {"output":{"status":"shipped tomorrow"}}` || len(ships.TurnMS) != 1 {
		t.Fatalf("ships: %+v", ships)
	}
	if len(ships.ToolCalls) != 1 || ships.ToolCalls[0].IsError || ships.ToolCalls[0].Name != "order_status" ||
		string(ships.ToolCalls[0].Arguments) != `{"order_id":"A-17"}` || ships.ToolCalls[0].Result != `{"status":"shipped tomorrow"}` {
		t.Fatalf("ships tool calls: %+v", ships.ToolCalls)
	}
	if hours.Status != agentline.TestResultPassed || hours.Transcript[1].Text != "Certainly: Ask the opening hours" {
		t.Fatalf("hours: %+v", hours)
	}
	if refund.Status != agentline.TestResultFailed || refund.Reason != "The agent promised a refund it may not give." {
		t.Fatalf("refund: %+v", refund)
	}
	if hits.Load() != 1 || sessions.Load() != 3 {
		t.Fatalf("webhook hits %d, Live sessions %d; want 1 and 3", hits.Load(), sessions.Load())
	}
	for _, ss := range live.Sessions() {
		setup, _ := ss.Setup()
		if setup.Model != "models/"+model || !slices.Equal(setup.GenerationConfig.ResponseModalities, []string{modality}) ||
			setup.Instructions() != "Help with orders." || !slices.Equal(setup.ToolNames(), []string{"order_status"}) {
			t.Errorf("setup %+v", setup)
		}
		if got := ss.Texts(); len(got) != 1 {
			t.Errorf("realtimeInput texts %q, want the person's one message", got)
		}
	}
	// Both ways, every message as @google/genai types it (setup,
	// realtimeInput text, toolResponse; model turns, transcriptions,
	// toolCall).
	if nm := genaiModules(t); nm != "" {
		var server, client []string
		for _, ss := range live.Sessions() {
			for _, m := range ss.Sent() {
				server = append(server, string(m))
			}
			for _, m := range ss.Messages() {
				client = append(client, string(m.Raw))
			}
		}
		checkGenAITypes(t, nm, server, client, nil)
		t.Logf("tsc took %d server and %d client messages of %s sessions as @google/genai types", len(server), len(client), modality)
	}
}
