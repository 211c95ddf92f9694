package analysis

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// EndMarker is what a simulated person answers when its conversation is
// over (its goal reached, or out of reach).
const EndMarker = "[END]"

// Verdict is a test transcript judged against a scenario's success
// criteria.
type Verdict struct {
	Passed bool
	Reason string
	Model  string
}

// Judge judges a played scenario with the analysis's own prompt and
// answer schema: the agent's instructions, the scenario's success
// criteria in place of the agent's, the transcript with its tool calls.
func Judge(ctx context.Context, a Analyst, agent agentline.Agent, s agentline.TestScenario, conv agentline.Conversation) (Verdict, error) {
	agent.Analysis = agentline.AnalysisSettings{SuccessCriteria: s.SuccessCriteria}
	schema, err := AnswerSchema(agent.Analysis)
	if err != nil {
		return Verdict{}, &PermanentError{err}
	}
	v, err := newValidator(schema)
	if err != nil {
		return Verdict{}, &PermanentError{err}
	}
	text, err := a.Analyze(ctx, Request{Instructions: instructions(agent), Transcript: transcript(conv), Schema: schema,
		Lines: conv.Transcript, Scenario: &s})
	if err != nil {
		return Verdict{Model: a.Model()}, err
	}
	ans, err := v.check(text)
	if err != nil {
		return Verdict{Model: a.Model()}, err
	}
	return Verdict{Passed: ans.Success != nil && *ans.Success, Reason: ans.SuccessReason, Model: a.Model()}, nil
}

// Speak asks a for the simulated person's next message in the
// conversation so far (lines, the agent's side last): a free-text answer,
// EndMarker when the person is done.
func Speak(ctx context.Context, a Analyst, s agentline.TestScenario, lines []agentline.Line) (string, error) {
	var b strings.Builder
	b.WriteString("You play a person talking to a company's AI agent, to test that agent. Stay in character.\n")
	fmt.Fprintf(&b, "Who you are:\n<<<\n%s\n>>>\nWhat you want:\n<<<\n%s\n>>>\n", s.Persona, agentline.FillVariables(s.Goal, s.Variables))
	b.WriteString("Answer with your next message to the agent only, short, as you would type it. ")
	fmt.Fprintf(&b, "When you have what you want, or it is clear you will not get it, answer exactly %s.\n", EndMarker)
	var in strings.Builder
	if len(lines) == 0 {
		in.WriteString("The conversation has not started: write your first message.")
	}
	for _, l := range lines {
		who := "You"
		if l.Speaker != "user" {
			who = "Agent"
		}
		fmt.Fprintf(&in, "%s: %s\n", who, strings.TrimSpace(l.Text))
	}
	text, err := a.Analyze(ctx, Request{Instructions: b.String(), Transcript: in.String(), Lines: lines, Scenario: &s})
	return strings.TrimSpace(text), err
}

// TestConversation is a played scenario as the judge reads it.
func TestConversation(agent agentline.Agent, s agentline.TestScenario, started time.Time, lines []agentline.Line, calls []agentline.ToolUse) agentline.Conversation {
	return agentline.Conversation{ProjectID: agent.ProjectID, AgentID: agent.ID, Kind: "test", StartedAt: started,
		Variables: s.Variables, Transcript: lines, ToolCalls: calls}
}
