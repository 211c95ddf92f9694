package relay

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/geminilive"
)

// toolCall starts the function calls of a toolCall message; the model
// waits for their answers, so its response is over meanwhile.
func (g *geminiSide) toolCall(ctx context.Context, val []byte) error {
	var tc geminilive.ToolCall
	if err := json.Unmarshal(val, &tc); err != nil {
		return end(EndRelayProtocolError, fmt.Errorf("toolCall message: %w", err))
	}
	g.flushTranscripts()
	g.c.turnStart(ctx) // a turn may ask for tools before it says a word
	g.c.mu.Lock()
	g.c.responseActive = false
	g.c.mu.Unlock()
	for _, f := range tc.FunctionCalls {
		g.c.startTool(ctx, f.Call())
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
	return g.write(ctx, geminilive.ToolResponse(call, res))
}
