package testrun

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/geminilive"
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
		s, err := dialLive(ctx, nil, creds, agent, map[string]string{"name": "Ada"}, tools, nil)
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

// A Live session the service says goAway to resumes on a new connection
// from the handle given after the last turn, so that every turn is played:
// a goAway during turn 2 lets the turn finish, and turn 3 goes on a second
// connection resuming the first's last handle; a connection that closes
// after a goAway before it answers turn 3 is resumed from the handle
// before it, and the message is sent again on a third.
func TestLiveSessionResumesAfterGoAway(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	live := geminilivefake.New("g-key")
	defer live.Close()
	live.OnSession = func(ctx context.Context, ss *geminilivefake.Session) {
		n := len(live.Sessions())
		ss.PlayText(ctx, func(in geminilivefake.TextInput) geminilivefake.TextReply {
			switch {
			case n == 1 && in.User == "two":
				ss.SendGoAway(ctx, 10*time.Second)
			case n == 2 && in.User == "three":
				ss.SendGoAway(ctx, 0)
				ss.Close(websocket.StatusGoingAway, "")
			}
			return geminilivefake.TextReply{Text: "Heard " + in.User}
		})
	}
	agent := agentline.Agent{Model: "gemini-2.5-flash-native-audio-preview-12-2025", Instructions: "Listen."}
	creds := agentline.ProviderCredentials{BaseURL: live.URL(), APIKey: "g-key"}
	s, err := dialLive(ctx, nil, creds, agent, nil, &hoursTool{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, msg := range []string{"one", "two", "three", "four"} {
		answer, _, err := s.Turn(ctx, msg)
		if err != nil {
			t.Fatalf("turn %q: %v", msg, err)
		}
		if answer != "Heard "+msg {
			t.Fatalf("turn %q answered %q", msg, answer)
		}
	}
	sessions := live.Sessions()
	if len(sessions) != 3 || s.resume.resumed != 2 {
		t.Fatalf("%d Live connections, %d resumed; want 3 and 2", len(sessions), s.resume.resumed)
	}
	texts := [][]string{{"one", "two"}, {"three"}, {"three", "four"}}
	for i, ss := range sessions {
		setup, _ := ss.Setup()
		if setup.SessionResumption == nil || setup.ContextWindowCompression == nil || !slices.Equal(ss.Texts(), texts[i]) {
			t.Errorf("connection %d: setup %+v, texts %q, want %q", i+1, setup, ss.Texts(), texts[i])
		}
	}
	// Each connection resumed from the last handle its predecessor gave.
	for i, ss := range sessions[1:] {
		if want := lastHandle(sessions[i]); ss.Resumed() != want || want == "" {
			t.Errorf("connection %d resumed %q, want %q", i+2, ss.Resumed(), want)
		}
	}
	if sessions[0].CloseStatus() != websocket.StatusNormalClosure {
		t.Errorf("the connection that went away was closed with %v, want 1000", sessions[0].CloseStatus())
	}
}

// lastHandle is the last resumable handle a fake session sent.
func lastHandle(ss *geminilivefake.Session) string {
	h := ""
	for _, m := range ss.Sent() {
		var u struct{ SessionResumptionUpdate *geminilive.ResumptionUpdate }
		if json.Unmarshal(m, &u) == nil {
			if got := u.SessionResumptionUpdate.Handle(); got != "" {
				h = got
			}
		}
	}
	return h
}

// A switch after goAway that the service refuses leaves the session on
// the old connection for the time it has left, as a call stays on its.
func TestLiveSessionStaysOnAfterARefusedResumption(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	live := geminilivefake.New("g-key")
	defer live.Close()
	var refuse atomic.Bool // a setup asking for TEXT is refused from then on
	live.SpeaksOnly = func(string) bool { return refuse.Load() }
	live.OnSession = func(ctx context.Context, ss *geminilivefake.Session) {
		ss.PlayText(ctx, func(in geminilivefake.TextInput) geminilivefake.TextReply {
			if in.User == "one" {
				refuse.Store(true)
				ss.SendGoAway(ctx, time.Minute)
			}
			return geminilivefake.TextReply{Text: "Heard " + in.User}
		})
	}
	agent := agentline.Agent{Model: "gemini-live-2.5-flash-preview"}
	creds := agentline.ProviderCredentials{BaseURL: live.URL(), APIKey: "g-key"}
	s, err := dialLive(ctx, nil, creds, agent, nil, &hoursTool{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, msg := range []string{"one", "two"} {
		if answer, _, err := s.Turn(ctx, msg); err != nil || answer != "Heard "+msg {
			t.Fatalf("turn %q: %q, %v", msg, answer, err)
		}
	}
	sessions := live.Sessions()
	if len(sessions) != 2 || s.resume.resumed != 0 || !slices.Equal(sessions[0].Texts(), []string{"one", "two"}) {
		t.Fatalf("%d connections, %d resumed, first took %q", len(sessions), s.resume.resumed, sessions[0].Texts())
	}
}
