package testrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/analysis"
)

// agentSession is the agent's side of a played scenario.
type agentSession interface {
	Turn(ctx context.Context, text string) (string, []agentline.ToolUse, error)
	Close()
}

// play plays one scenario: the person speaks first, then each agent
// answer gets the person's next message, until the person ends it or
// max_turns turns have been played; then the judge gives its verdict.
func (w *Worker) play(ctx context.Context, p agentline.TestPlay) (agentline.TestResult, error) {
	var res agentline.TestResult
	agent, err := w.Settings(ctx, p.Run)
	if agentline.ErrorCode(err) == agentline.ENotFound {
		return res, &analysis.PermanentError{Err: errors.New("the agent was deleted")}
	}
	if err != nil {
		return res, err
	}
	text, err := analysis.Choose(ctx, w.o.Analysis, agent.ProjectID, agent.Provider)
	if err != nil {
		return res, err
	}
	if text == nil {
		return res, &analysis.PermanentError{Err: fmt.Errorf("no %s provider is configured for the simulated person and the judge (its API key is not set)", agent.Provider)}
	}
	sess, err := w.open(ctx, agent, p.Scenario.Variables)
	if err != nil {
		return res, err
	}
	defer sess.Close()
	s, started := p.Scenario, time.Now()
	for res.Turns < s.MaxTurns {
		said, err := analysis.Speak(ctx, text, s, res.Transcript)
		if err != nil {
			return res, fmt.Errorf("the simulated person: %w", err)
		}
		if said == "" || strings.Contains(said, analysis.EndMarker) {
			break
		}
		res.Transcript = append(res.Transcript, agentline.Line{Speaker: "user", Text: said, At: time.Now().UTC()})
		t0 := time.Now()
		answer, uses, err := sess.Turn(ctx, said)
		res.ToolCalls = append(res.ToolCalls, uses...)
		if err != nil {
			return res, err
		}
		res.TurnMS = append(res.TurnMS, time.Since(t0).Milliseconds())
		res.Transcript = append(res.Transcript, agentline.Line{Speaker: "agent", Text: answer, At: time.Now().UTC()})
		res.Turns++
	}
	v, err := analysis.Judge(ctx, text, agent, s, analysis.TestConversation(agent, s, started, res.Transcript, res.ToolCalls))
	if err != nil {
		return res, fmt.Errorf("the judge: %w", err)
	}
	res.Status, res.Reason = agentline.TestResultFailed, v.Reason
	if v.Passed {
		res.Status = agentline.TestResultPassed
	}
	return res, nil
}

// open opens the agent's session on its project's provider account (or
// the deployment's): the realtime socket in text modality for an
// OpenAI-kind agent, its Live session for a Gemini-kind one.
func (w *Worker) open(ctx context.Context, agent agentline.Agent, vars map[string]string) (agentSession, error) {
	creds, err := w.o.Credentials.Credentials(ctx, agent.ProjectID, agent.Provider)
	if agentline.ErrorCode(err) == agentline.ENotConfigured {
		return nil, &analysis.PermanentError{Err: err}
	}
	if err != nil {
		return nil, err
	}
	if creds.APIKey == "" {
		return nil, &analysis.PermanentError{Err: fmt.Errorf("no %s key: the project has no provider account and the server none", agent.Provider)}
	}
	hc := w.o.HTTP
	if creds.Project {
		hc = w.o.ProjectHTTP
	}
	if agent.Provider == agentline.ProviderGemini {
		return dialLive(ctx, hc, creds, agent, vars, w.o.Tools, w.o.Logger)
	}
	return dialText(ctx, hc, creds.BaseURL, creds.APIKey, agent, vars, w.o.Tools)
}
