package app_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/analysis"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/analysisfake"
	"github.com/agentline/agentline/internal/provider/realtimefake"
)

// A test run of three scenarios against fakes that speak the real wire
// protocols under one OPENAI_BASE_URL: the simulated person and the judge
// through the Responses API, the agent through the realtime WebSocket in
// text modality. The agent calls its webhook tool (run for real) before
// it answers the order question; the judge fails the refund scenario with
// its reason.
func TestTestRunAgainstProviderFakes(t *testing.T) {
	t.Parallel()
	model, text, providers := openAIFakes(t)
	scriptPersonAndJudge(text)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var sessions atomic.Int32
	go func() {
		for {
			ss, err := model.Next(ctx)
			if err != nil {
				return
			}
			sessions.Add(1)
			go ss.PlayText(ctx, func(in realtimefake.TextInput) realtimefake.TextReply {
				switch {
				case len(in.ToolOutputs) > 0:
					return realtimefake.TextReply{Text: "Your order: " + in.ToolOutputs[0]}
				case strings.Contains(in.User, "A-17"):
					return realtimefake.TextReply{Call: &realtimefake.FunctionCall{Name: "order_status", Arguments: `{"order_id":"A-17"}`}}
				}
				return realtimefake.TextReply{Text: "Certainly: " + in.User}
			})
		}
	}()
	s := apptest.StartFresh(t, "sqlite", map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": providers,
		"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	a, hits, _ := testRunSetup(t, s, tok)
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
	ships, refund := byName["ships"], byName["refund"]
	if ships.Turns != 1 || ships.Transcript[0].Text != "Learn when order A-17 ships" || ships.Transcript[1].Text != `Your order: {"status":"shipped tomorrow"}` {
		t.Fatalf("ships: %+v", ships)
	}
	if len(ships.ToolCalls) != 1 || ships.ToolCalls[0].IsError || string(ships.ToolCalls[0].Arguments) != `{"order_id":"A-17"}` {
		t.Fatalf("ships tool calls: %+v", ships.ToolCalls)
	}
	if refund.Status != agentline.TestResultFailed || refund.Reason != "The agent promised a refund it may not give." {
		t.Fatalf("refund: %+v", refund)
	}
	if hits.Load() != 1 || sessions.Load() != 3 {
		t.Fatalf("webhook hits %d, realtime sessions %d; want 1 and 3", hits.Load(), sessions.Load())
	}
}

// scriptPersonAndJudge makes the text fake's simulated person say its
// scenario's goal, then end, and its judge fail what mentions a refund.
func scriptPersonAndJudge(text *analysisfake.Fake) {
	text.Say(func(instructions, input string) string {
		if !strings.Contains(input, "has not started") {
			return analysis.EndMarker
		}
		goal := instructions[strings.Index(instructions, "What you want:\n<<<\n")+len("What you want:\n<<<\n"):]
		return goal[:strings.Index(goal, "\n>>>")]
	})
	text.Answer(func(schema map[string]any, input string) any {
		if strings.Contains(input, "refund") {
			return map[string]any{"success": false, "success_reason": "The agent promised a refund it may not give."}
		}
		return map[string]any{"success": true, "success_reason": "The agent answered the question."}
	})
}
