package relay

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentline/agentline"
)

// toolCall starts the function calls of a toolCall message; the model
// waits for their answers, so its response is over meanwhile.
func (g *geminiSide) toolCall(ctx context.Context, val []byte) error {
	var tc struct {
		FunctionCalls []struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCalls"`
	}
	if err := json.Unmarshal(val, &tc); err != nil {
		return end(EndRelayProtocolError, fmt.Errorf("toolCall message: %w", err))
	}
	g.flushTranscripts()
	g.c.turnStart(ctx) // a turn may ask for tools before it says a word
	g.c.mu.Lock()
	g.c.responseActive = false
	g.c.mu.Unlock()
	for _, f := range tc.FunctionCalls {
		args := f.Args
		if !json.Valid(args) || len(args) == 0 || args[0] != '{' {
			args = json.RawMessage("{}")
		}
		g.c.startTool(ctx, agentline.ToolCall{CallID: f.ID, Name: f.Name, Arguments: args})
	}
	return nil
}

// toolCallCancellation marks calls the model withdrew: their results are
// recorded but not sent.
func (g *geminiSide) toolCallCancellation(val []byte) {
	var tc struct {
		IDs []string `json:"ids"`
	}
	json.Unmarshal(val, &tc)
	g.mu.Lock()
	for _, id := range tc.IDs {
		if len(g.canceled) < 1000 {
			g.canceled[id] = true
		}
	}
	g.mu.Unlock()
	g.c.log.Info("the model withdrew tool calls", "ids", tc.IDs)
}

// toolResponse answers one function call with the tool's output, unless
// the model withdrew it.
func (g *geminiSide) toolResponse(ctx context.Context, call agentline.ToolCall, res agentline.ToolResult) error {
	g.mu.Lock()
	canceled := g.canceled[call.CallID]
	g.mu.Unlock()
	if canceled {
		g.c.log.Info("tool result not sent: the model withdrew the call", "tool", call.Name, "call_id", call.CallID)
		return nil
	}
	key, value := "output", json.RawMessage(res.Output)
	if res.IsError {
		key = "error"
	}
	if !json.Valid(value) {
		value, _ = json.Marshal(res.Output)
	}
	type response struct {
		ID       string                     `json:"id"`
		Name     string                     `json:"name"`
		Response map[string]json.RawMessage `json:"response"`
	}
	msg, _ := json.Marshal(map[string]any{"toolResponse": map[string]any{
		"functionResponses": []response{{ID: call.CallID, Name: call.Name, Response: map[string]json.RawMessage{key: value}}}}})
	return g.write(ctx, msg)
}

// textInput is a realtimeInput text message: what the caller pressed, or
// the cue to speak first. Text goes as realtime input rather than
// clientContent, which newer Live models take only as initial history.
func textInput(text string) []byte {
	b, _ := json.Marshal(map[string]any{"realtimeInput": map[string]string{"text": text}})
	return b
}

// GeminiText is the message that tells a Gemini Live model something
// during a call (SpeakFirst's cue).
func GeminiText(text string) []byte { return textInput(text) }
