package livecall

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// phoneInstructions is added to an agent's instructions on calls, so the
// model knows how to end one.
const phoneInstructions = "\n\nYou are speaking with someone on a phone call. Keep answers short. " +
	"When the conversation is over, say goodbye, then call end_call."

var endCallTool = agentline.ToolDefinition{
	Name:        relay.EndCallTool,
	Description: "Hang up the phone call. Call it after you have said goodbye, when the conversation is over or the caller asks to end the call.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
}

// transferCallTool is offered on calls of agents with a transfer number.
var transferCallTool = agentline.ToolDefinition{
	Name:        "transfer_call",
	Description: "Transfer the caller to a person. Tell the caller you are transferring them, then call it; the transfer happens once your words have played.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
}

// toolDefinitions are the agent's tools plus the phone-only ones: opt_out
// on campaign calls (those to a contact).
func (h *Handler) toolDefinitions(ctx context.Context, agent agentline.Agent, call agentline.Call) ([]agentline.ToolDefinition, error) {
	var defs []agentline.ToolDefinition
	var err error
	if h.tools != nil {
		defs, err = h.tools.Definitions(ctx, agent)
	}
	defs = append(defs, endCallTool)
	if agent.TransferNumber != "" {
		defs = append(defs, transferCallTool)
	}
	if call.ContactID != nil {
		defs = append(defs, optOutTool)
	}
	return defs, err
}

// withVariables is the agent as it speaks on call: a campaign call's
// variables fill the {{name}} placeholders of its instructions and
// greeting (agentline.FillVariables). Other calls have none.
func withVariables(a agentline.Agent, call agentline.Call) agentline.Agent {
	a.Instructions = agentline.FillVariables(a.Instructions, call.Variables)
	a.Greeting = agentline.FillVariables(a.Greeting, call.Variables)
	return a
}

// sessionUpdate is the GA session.update of a call: mu-law both ways (the
// carrier's audio passes through), server VAD, the agent's instructions,
// voice, language and tools.
func (h *Handler) sessionUpdate(agent agentline.Agent, defs []agentline.ToolDefinition) ([]byte, error) {
	type obj = map[string]any
	language, _, _ := strings.Cut(agent.Language, "-") // transcription takes ISO 639-1
	session := obj{
		"type":              "realtime",
		"output_modalities": []string{"audio"},
		"instructions":      agent.Instructions + phoneInstructions,
		"audio": obj{
			"input": obj{
				"format":        obj{"type": "audio/pcmu"},
				"transcription": obj{"model": "gpt-4o-mini-transcribe", "language": strings.ToLower(language)},
				"turn_detection": obj{"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300,
					"silence_duration_ms": 500, "create_response": true, "interrupt_response": true},
			},
			"output": obj{"format": obj{"type": "audio/pcmu"}, "voice": h.voices.realtimeVoice(agent.Voice)},
		},
		"tools":       agentline.OpenAITools(defs),
		"tool_choice": "auto",
	}
	return json.Marshal(event{"session.update", "session", session})
}

// event is a client event with its type first, as the service's own
// examples write them.
type event struct {
	Type string
	key  string
	Body any
}

func (e event) MarshalJSON() ([]byte, error) {
	body, err := json.Marshal(e.Body)
	if err != nil {
		return nil, err
	}
	return []byte(`{"type":"` + e.Type + `","` + e.key + `":` + string(body) + `}`), nil
}

// speakFirst is the response.create that makes the agent talk before the
// caller: on outbound calls, and on inbound calls of agents with a greeting.
func speakFirst(agent agentline.Agent, direction string) []byte {
	instructions := speakFirstText(agent, direction)
	if instructions == "" {
		return nil
	}
	b, _ := json.Marshal(event{"response.create", "response", map[string]any{"instructions": instructions}})
	return b
}

// callTools runs a call's tool calls through the tool facility, bound to
// the call's agent, and transfer_call and opt_out itself.
type callTools struct {
	h     *Handler
	agent agentline.Agent
	call  agentline.Call
	// relay and transfer are set before the relay runs: transfer_call
	// marks the call for transfer and ends it after the agent's last words.
	relay    *relay.Call
	transfer *atomic.Bool
	// optedOut is set once opt_out has recorded the opt-out.
	optedOut *atomic.Bool
	log      *slog.Logger
}

func (t callTools) Execute(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
	switch {
	case call.Name == transferCallTool.Name && t.agent.TransferNumber != "":
		t.transfer.Store(true)
		t.relay.EndAfterPlayback()
		return agentline.ToolResult{CallID: call.CallID, Output: `{"ok":true,"note":"the caller is transferred once your words have played"}`}, nil
	case call.Name == optOutTool.Name && t.call.ContactID != nil:
		return t.optOut(ctx, call), nil
	}
	if t.h.tools == nil {
		return agentline.ToolResult{CallID: call.CallID, IsError: true,
			Output: `{"error":{"code":"unknown_tool","message":"this agent has no tools"}}`}, nil
	}
	return t.h.tools.Execute(ctx, t.agent, call)
}
