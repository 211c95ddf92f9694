package testrun

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
)

type hoursTool struct{ calls []agentline.ToolCall }

func (h *hoursTool) Definitions(context.Context, agentline.Agent) ([]agentline.ToolDefinition, error) {
	return []agentline.ToolDefinition{{Name: "hours", Description: "Opening hours.", Parameters: []byte(`{"type":"object"}`)}}, nil
}

func (h *hoursTool) Execute(_ context.Context, _ agentline.Agent, c agentline.ToolCall) (agentline.ToolResult, error) {
	h.calls = append(h.calls, c)
	return agentline.ToolResult{CallID: c.CallID, Output: `{"open":"9-6"}`}, nil
}

// A Live model the name of which does not say it speaks only is asked for
// TEXT; when the service refuses that setup (1007), the session is set up
// again in AUDIO with the output transcribed, and the turn is read from
// the transcription. A TEXT session's answer leaves the thoughts out.
func TestLiveSessionFallsBackToAudioWhenTextIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, refuse := range []bool{false, true} {
		live := geminilivefake.New("g-key")
		live.SpeaksOnly = func(string) bool { return refuse }
		live.OnSession = func(ctx context.Context, ss *geminilivefake.Session) {
			ss.PlayText(ctx, func(in geminilivefake.TextInput) geminilivefake.TextReply {
				if len(in.ToolOutputs) == 0 {
					return geminilivefake.TextReply{Call: &geminilivefake.FunctionCall{Name: "hours", Args: map[string]any{"day": "monday"}}}
				}
				return geminilivefake.TextReply{Text: "We are open " + in.ToolOutputs[0]}
			})
		}
		tools := &hoursTool{}
		agent := agentline.Agent{Model: "gemini-3.1-flash-live-preview", Instructions: "Help {{name}}."}
		creds := agentline.ProviderCredentials{BaseURL: live.URL(), APIKey: "g-key"}
		s, err := dialLive(ctx, nil, creds, agent, map[string]string{"name": "Ada"}, tools)
		if err != nil {
			t.Fatal(err)
		}
		answer, uses, err := s.Turn(ctx, "When are you open?")
		s.Close()
		live.Close()
		if err != nil {
			t.Fatal(err)
		}
		if answer != `We are open {"output":{"open":"9-6"}}` || len(uses) != 1 || string(uses[0].Arguments) != `{"day":"monday"}` || s.audio != refuse {
			t.Fatalf("refused %v: answer %q, uses %+v, audio %v", refuse, answer, uses, s.audio)
		}
		sessions := live.Sessions()
		setup, _ := sessions[len(sessions)-1].Setup()
		want := map[bool]string{false: "TEXT", true: "AUDIO"}[refuse]
		if len(sessions) != map[bool]int{false: 1, true: 2}[refuse] || strings.Join(setup.GenerationConfig.ResponseModalities, ",") != want ||
			setup.Instructions() != "Help Ada." || (refuse && setup.OutputAudioTranscription == nil) {
			t.Fatalf("refused %v: %d sessions, last setup %+v", refuse, len(sessions), setup)
		}
	}
}
