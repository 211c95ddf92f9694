package livecall

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// CallSpan is the name of a phone call's span: its turns (relay.TurnSpan)
// and their tool calls are inside it.
const CallSpan = "phone_call"

// startCallSpan opens the call's span when tracing is on, with the
// conversation id that links it to the call's jobs; end returns at once
// when off.
func (h *Handler) startCallSpan(ctx context.Context, sc *streamCall) (context.Context, func(relay.Result, string)) {
	if h.tracer == nil {
		return ctx, func(relay.Result, string) {}
	}
	ctx, span := h.tracer.Start(ctx, CallSpan, trace.WithAttributes(
		attribute.String(agentline.ConversationIDAttribute, agentline.CallConversationID(sc.call.ID)),
		attribute.String("agentline.call.sid", sc.start.CallSID),
		attribute.String("agentline.call.direction", sc.claims.Direction),
		attribute.Int64("agentline.project_id", sc.call.ProjectID),
		attribute.Int64("agentline.agent_id", sc.agent.ID),
		attribute.String("agentline.provider", string(sc.agent.Provider)),
	))
	return ctx, func(res relay.Result, reason string) {
		span.SetAttributes(attribute.String("agentline.call.end_reason", reason),
			attribute.Int64("agentline.call.caller_frames", res.CallerFrames),
			attribute.Int64("agentline.call.agent_frames", res.AgentFrames))
		if res.Err != nil {
			span.SetStatus(codes.Error, res.Err.Error())
		}
		span.End()
	}
}
