package relay

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
)

// Span names of a call's trace below the call's own span.
const (
	TurnSpan = "turn"      // one response cycle of the model
	ToolSpan = "tool_call" // one tool call, inside the turn that asked for it
)

// Tracing happens at turn and tool boundaries only, never per frame: the
// model's reader starts a turn's span when a response starts
// (response.created; on Gemini the turn's first audio or tool call) and
// ends it when the response is done (response.done; Gemini's turnComplete
// or interruption). Only the model's reader touches turn and turnCtx, and
// Run ends a turn left open once that reader has returned. With no Tracer
// each hook is one nil check.

// turnStart opens the span of the model's next turn, unless one is open.
func (c *Call) turnStart(ctx context.Context) {
	if c.opts.Tracer == nil || c.turn != nil {
		return
	}
	c.turns++
	c.turnCtx, c.turn = c.opts.Tracer.Start(ctx, TurnSpan, trace.WithAttributes(attribute.Int("agentline.turn", c.turns)))
}

// turnEnd closes the open turn's span, if any.
func (c *Call) turnEnd() {
	if c.turn == nil {
		return
	}
	c.turn.End()
	c.turn, c.turnCtx = nil, nil
}

// inTurn is ctx carrying the open turn's span, so that a tool call started
// now is its child; ctx itself without one.
func (c *Call) inTurn(ctx context.Context) context.Context {
	if c.turn == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, c.turn)
}

// toolSpan opens the span of one tool call; end it with endToolSpan.
func (c *Call) toolSpan(ctx context.Context, call agentline.ToolCall) (context.Context, trace.Span) {
	if c.opts.Tracer == nil {
		return ctx, nil
	}
	return c.opts.Tracer.Start(ctx, ToolSpan, trace.WithAttributes(
		attribute.String("agentline.tool.name", call.Name), attribute.String("agentline.tool.call_id", call.CallID)))
}

func endToolSpan(span trace.Span, res agentline.ToolResult, err error) {
	if span == nil {
		return
	}
	switch {
	case err != nil:
		span.SetStatus(codes.Error, err.Error())
	case res.IsError:
		span.SetStatus(codes.Error, "the tool answered an error")
	}
	span.End()
}
