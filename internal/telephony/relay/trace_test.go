package relay_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// On a Gemini call a turn runs from its first audio (or tool call) to
// turnComplete or the caller's interruption, and a tool call's span is a
// child of the turn that asked for it.
func TestGeminiTurnSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tools := toolFunc(func(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
		return agentline.ToolResult{CallID: call.CallID, Output: `{"ok":true}`}, nil
	})
	g := newTracedGeminiRig(t, tools, tp.Tracer("test"))
	ctx := g.ctx
	g.live.SendAudio(ctx, geminilivefake.Tone(100*time.Millisecond))
	g.media(800)
	g.live.SendInterrupted(ctx) // ends turn 1
	for m := g.readCarrier(); m.Event != "clear"; m = g.readCarrier() {
	}
	g.live.SendToolCall(ctx, geminilivefake.FunctionCall{ID: "fc_1", Name: "hours", Args: map[string]any{}}) // starts turn 2
	if _, err := g.live.WaitKind(ctx, "toolResponse"); err != nil {
		t.Fatal(err)
	}
	g.live.SendAudio(ctx, geminilivefake.Tone(100*time.Millisecond))
	g.media(800)
	g.live.SendTurnComplete(ctx) // ends turn 2
	g.send(`{"event":"stop","sequenceNumber":"200","streamSid":"MZ1"}`)
	if res := g.waitResult(); res.Reason != relay.EndCallerHangup {
		t.Fatalf("result %+v", res)
	}
	var turns, toolSpans []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case relay.TurnSpan:
			turns = append(turns, s)
		case relay.ToolSpan:
			toolSpans = append(toolSpans, s)
		}
	}
	if len(turns) != 2 || len(toolSpans) != 1 {
		t.Fatalf("%d turns and %d tool calls, want 2 and 1", len(turns), len(toolSpans))
	}
	if toolSpans[0].Parent().SpanID() != turns[1].SpanContext().SpanID() {
		t.Errorf("the tool call's parent is %v, want the second turn %v", toolSpans[0].Parent().SpanID(), turns[1].SpanContext().SpanID())
	}
}
