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
	call := agentline.ToolCall{CallID: ev.CallID, Name: ev.Name, Arguments: args}
	if call.Name == EndCallTool {
		c.EndAfterPlayback()
		c.opts.OnEvent(Event{Type: "tool_call", Call: &call, Result: &agentline.ToolResult{CallID: call.CallID, Output: `{"ok":true}`}, At: time.Now()})
		return nil
	}
	c.mu.Lock()
	c.toolsPending++
	c.mu.Unlock()
	go c.runTool(ctx, call)
	return nil
}

func (c *Call) runTool(ctx context.Context, call agentline.ToolCall) {
	start := time.Now()
	var res agentline.ToolResult
	var err error
	if c.opts.Tools == nil {
		res = agentline.ToolResult{CallID: call.CallID, IsError: true, Output: `{"error":{"code":"unknown_tool","message":"this agent has no tools"}}`}
	} else if res, err = c.opts.Tools.Execute(ctx, call); err != nil {
		if ctx.Err() != nil {
			return
		}
		res = agentline.ToolResult{CallID: call.CallID, IsError: true, Output: `{"error":{"code":"internal","message":"the tool could not run"}}`}
		c.log.Error("tool call failed", "tool", call.Name, "call_id", call.CallID, "err", err)
	}
	c.log.Info("tool call", "tool", call.Name, "call_id", call.CallID, "is_error", res.IsError, "duration", time.Since(start))
	c.opts.OnEvent(Event{Type: "tool_call", Call: &call, Result: &res, At: time.Now()})
	item, _ := json.Marshal(struct {
		Type string `json:"type"`
		Item struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"item"`
	}{Type: "conversation.item.create", Item: struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}{"function_call_output", call.CallID, res.Output}})
	if c.writeModel(ctx, item) != nil {
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
