package testrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider"
)

// maxToolRounds bounds the function calls of one agent turn, so a model
// that keeps calling tools cannot hold a scenario forever.
const maxToolRounds = 8

// textSession is the agent's own realtime session in text modality (OpenAI
// Realtime, GA event names): session.update with output_modalities
// ["text"], each person's message a conversation.item.create (a user
// message of input_text) and response.create; the answer comes as
// response.output_text.delta / .done, function calls as
// response.function_call_arguments.done, each answered with a
// function_call_output item and another response.create, and a turn is
// over at a response.done that asked for no function.
type textSession struct {
	ws    *websocket.Conn
	agent agentline.Agent
	tools ToolRunner
	now   func() time.Time
}

// ToolRunner runs the agent's tool calls: the tool facility.
type ToolRunner interface {
	Definitions(ctx context.Context, agent agentline.Agent) ([]agentline.ToolDefinition, error)
	Execute(ctx context.Context, agent agentline.Agent, call agentline.ToolCall) (agentline.ToolResult, error)
}

// dialText opens the agent's realtime socket at base with key and sets the
// session up for text with the agent's instructions and tools.
func dialText(ctx context.Context, hc *http.Client, base, key string, agent agentline.Agent, vars map[string]string, tools ToolRunner) (*textSession, error) {
	defs, err := tools.Definitions(ctx, agent)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, provider.RealtimeURL(base, agent.Model), &websocket.DialOptions{HTTPClient: hc,
		HTTPHeader: http.Header{"Authorization": {"Bearer " + key}}})
	if err != nil {
		return nil, fmt.Errorf("the agent's realtime socket: %w", err)
	}
	ws.SetReadLimit(4 << 20)
	s := &textSession{ws: ws, agent: agent, tools: tools, now: time.Now}
	err = s.send(ctx, map[string]any{"type": "session.update", "session": map[string]any{
		"type": "realtime", "output_modalities": []string{"text"},
		"instructions": agentline.FillVariables(agent.Instructions, vars), "tools": agentline.OpenAITools(defs)}})
	if err != nil {
		ws.CloseNow()
		return nil, err
	}
	return s, nil
}

func (s *textSession) send(ctx context.Context, ev any) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return s.ws.Write(ctx, websocket.MessageText, b)
}

func (s *textSession) Close() { s.ws.Close(websocket.StatusNormalClosure, "") }

// serverEvent is the part of a server event a turn reads.
type serverEvent struct {
	Type      string `json:"type"`
	Delta     string `json:"delta"`
	Text      string `json:"text"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Error     *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Turn sends the person's message and returns the agent's answer with the
// tool calls it made (run through the tool facility) on the way.
func (s *textSession) Turn(ctx context.Context, text string) (string, []agentline.ToolUse, error) {
	err := s.send(ctx, map[string]any{"type": "conversation.item.create", "item": map[string]any{
		"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}})
	if err == nil {
		err = s.send(ctx, map[string]any{"type": "response.create"})
	}
	if err != nil {
		return "", nil, err
	}
	var answer strings.Builder
	var uses []agentline.ToolUse
	var calls []agentline.ToolCall
	for rounds := 0; ; {
		_, msg, err := s.ws.Read(ctx)
		if err != nil {
			return answer.String(), uses, fmt.Errorf("the agent's realtime socket: %w", err)
		}
		var ev serverEvent
		if json.Unmarshal(msg, &ev) != nil {
			continue
		}
		switch ev.Type {
		case "response.output_text.delta":
			answer.WriteString(ev.Delta)
		case "response.output_text.done":
			answer.Reset()
			answer.WriteString(ev.Text)
		case "response.function_call_arguments.done":
			calls = append(calls, agentline.ToolCall{CallID: ev.CallID, Name: ev.Name, Arguments: json.RawMessage(ev.Arguments)})
		case "error":
			if ev.Error != nil {
				return answer.String(), uses, fmt.Errorf("the agent's model: %s: %s", ev.Error.Code, ev.Error.Message)
			}
		case "response.done":
			if len(calls) == 0 {
				return answer.String(), uses, nil
			}
			if rounds++; rounds > maxToolRounds {
				return answer.String(), uses, errors.New("the agent called tools more than 8 times in one turn")
			}
			done, err := s.runTools(ctx, calls)
			uses = append(uses, done...)
			if err != nil {
				return answer.String(), uses, err
			}
			calls = nil
		}
	}
}

// runTools runs calls, gives the model their outputs and asks it to go on.
func (s *textSession) runTools(ctx context.Context, calls []agentline.ToolCall) ([]agentline.ToolUse, error) {
	var uses []agentline.ToolUse
	for _, c := range calls {
		start := s.now()
		res, err := s.tools.Execute(ctx, s.agent, c)
		if err != nil {
			return uses, err
		}
		ms := s.now().Sub(start).Milliseconds()
		uses = append(uses, agentline.ToolUse{CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Result: res.Output,
			IsError: res.IsError, DurationMS: &ms, At: start.UTC()})
		if err := s.send(ctx, map[string]any{"type": "conversation.item.create", "item": map[string]any{
			"type": "function_call_output", "call_id": c.CallID, "output": res.Output}}); err != nil {
			return uses, err
		}
	}
	return uses, s.send(ctx, map[string]any{"type": "response.create"})
}
