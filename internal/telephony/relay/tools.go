package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// toolCall starts a tool call; audio keeps flowing while it runs.
func (c *Call) toolCall(ctx context.Context, msg []byte) error {
	var ev struct {
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	if err := json.Unmarshal(msg, &ev); err != nil {
		return end(EndRelayProtocolError, fmt.Errorf("function call event: %w", err))
	}
	args := json.RawMessage(ev.Arguments)
	if !json.Valid(args) {
		args = json.RawMessage("{}")
	}
	c.startTool(ctx, agentline.ToolCall{CallID: ev.CallID, Name: ev.Name, Arguments: args})
	return nil
}

// startTool runs a tool call in its own goroutine (end_call at once).
func (c *Call) startTool(ctx context.Context, call agentline.ToolCall) {
	if call.Name == EndCallTool {
		c.EndAfterPlayback()
		c.opts.OnEvent(Event{Type: "tool_call", Call: &call, Result: &agentline.ToolResult{CallID: call.CallID, Output: `{"ok":true}`}, At: time.Now()})
		return
	}
	c.mu.Lock()
	c.toolsPending++
	c.mu.Unlock()
	ctx = c.inTurn(ctx)
	c.toolRuns.Go(func() { c.runTool(ctx, call) })
}

// runTool runs one tool call. Its ctx is the call's, which ends at teardown,
// and Run waits for it: so nothing of it outlives Run. A result that comes
// once the call has ended is still recorded and logged as any (the tool may
// have done something the call's record must show, and the call's log still
// takes events until Run returns), but deliberately not sent: the model's
// socket is closing and nobody is left to hear the answer. A tool that
// failed because the call ended has no result; that is only logged.
func (c *Call) runTool(ctx context.Context, call agentline.ToolCall) {
	start := time.Now()
	tctx, span := c.toolSpan(ctx, call)
	res, err := c.execute(tctx, call)
	endToolSpan(span, res, err)
	if err != nil {
		c.log.Info("tool call canceled: the call ended", "tool", call.Name, "call_id", call.CallID, "duration", time.Since(start), "err", err)
		return
	}
	c.log.Info("tool call", "tool", call.Name, "call_id", call.CallID, "is_error", res.IsError, "duration", time.Since(start))
	c.opts.OnEvent(Event{Type: "tool_call", Call: &call, Result: &res, At: time.Now()})
	if ctx.Err() != nil {
		c.log.Info("tool result not sent: the call ended", "tool", call.Name, "call_id", call.CallID)
		return
	}
	if c.gem != nil { // the service goes on once it has the answer
		c.gem.toolResponse(ctx, call, res)
		c.mu.Lock()
		c.toolsPending--
		c.mu.Unlock()
		return
	}
	if c.writeModel(ctx, functionCallOutput(call.CallID, res.Output)) != nil {
		return
	}
	c.mu.Lock()
	c.toolsPending--
	c.outputsWaiting = true
	send := c.takeResponseCreateLocked()
	c.mu.Unlock()
	if send {
		c.writeModel(ctx, responseCreate)
	}
}

// execute runs a tool call. A tool's own failure is a result, for the model
// to tell the caller; an error is returned only when the call ended meanwhile.
func (c *Call) execute(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
	if c.opts.Tools == nil {
		return agentline.ToolResult{CallID: call.CallID, IsError: true, Output: `{"error":{"code":"unknown_tool","message":"this agent has no tools"}}`}, nil
	}
	res, err := c.opts.Tools.Execute(ctx, call)
	if err != nil {
		if ctx.Err() != nil {
			return res, err
		}
		c.log.Error("tool call failed", "tool", call.Name, "call_id", call.CallID, "err", err)
		return agentline.ToolResult{CallID: call.CallID, IsError: true, Output: `{"error":{"code":"internal","message":"the tool could not run"}}`}, nil
	}
	return res, nil
}

// functionCallOutput is the conversation item that answers a tool call.
func functionCallOutput(callID, output string) []byte {
	type item struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
	b, _ := json.Marshal(struct {
		Type string `json:"type"`
		Item item   `json:"item"`
	}{"conversation.item.create", item{"function_call_output", callID, output}})
	return b
}

var responseCreate = []byte(`{"type":"response.create"}`)

// takeResponseCreateLocked reports whether a response.create is owed now: tool
// outputs are in, no tool is still running and no response is active (the
// model refuses a second active response).
func (c *Call) takeResponseCreateLocked() bool {
	if c.outputsWaiting && c.toolsPending == 0 && !c.responseActive && !c.endRequested {
		c.outputsWaiting = false
		return true
	}
	return false
}

func (c *Call) responseDone(ctx context.Context) error {
	c.mu.Lock()
	c.responseActive = false
	send := c.takeResponseCreateLocked()
	c.mu.Unlock()
	if send {
		return c.writeModel(ctx, responseCreate)
	}
	return nil
}
