package relay_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// lateTools runs every call until the call's context ends and then still
// answers, as a tool that finished its work regardless would. Before it
// answers it waits for the test to have seen Run return, so that a relay
// which does not wait for its tools visibly returns first; a relay which
// does wait never lets that happen, and the tool goes on after a moment
// (that moment is not asserted on: it only keeps such a relay from waiting
// for the test while the test waits for it).
type lateTools struct {
	started   chan struct{} // gets one value per call
	canceled  atomic.Int32  // calls whose context ended
	returned  atomic.Int32  // calls that returned
	runIsOver chan struct{} // closed by the test once Run has returned
}

func (l *lateTools) Execute(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
	defer l.returned.Add(1)
	l.started <- struct{}{}
	<-ctx.Done()
	l.canceled.Add(1)
	select {
	case <-l.runIsOver:
	case <-time.After(100 * time.Millisecond):
	}
	return agentline.ToolResult{CallID: call.CallID, Output: `{"booked":true}`}, nil
}

// A tool still running when the caller hangs up: its context ends, Run
// returns only once it has returned, and its late result is recorded as any
// tool call (before Run returns, while the call's log still takes it) but
// not sent to the model, whose socket is being closed.
func TestToolStillRunningWhenTheCallEnds(t *testing.T) {
	tools := &lateTools{started: make(chan struct{}, 1), runIsOver: make(chan struct{})}
	r := newRig(t, rigOptions{tools: tools})
	r.modelSend(map[string]any{"type": "response.function_call_arguments.done", "call_id": "call_late", "name": "book", "arguments": `{}`})
	select {
	case <-tools.started:
	case <-r.ctx.Done():
		t.Fatal("the tool did not start")
	}
	r.send(`{"event":"stop","streamSid":"MZ1","stop":{}}`)
	res := r.waitResult()
	returned := tools.returned.Load()
	close(tools.runIsOver)
	if res.Reason != relay.EndCallerHangup {
		t.Fatalf("reason = %s", res.Reason)
	}
	if returned != 1 || tools.canceled.Load() != 1 {
		t.Fatalf("Run returned with the tool still running (returned %d, canceled %d)", returned, tools.canceled.Load())
	}
	if !r.model.WaitDone(time.Second) {
		t.Fatal("model socket still open")
	}
	for _, e := range r.model.Events() {
		if e.Type == "response.create" || strings.Contains(string(e.Raw), "function_call_output") {
			t.Fatalf("the late result reached the model: %s", e.Raw)
		}
	}
	if n := r.lateEvents.Load(); n != 0 {
		t.Fatalf("%d events reported after Run returned", n)
	}
	var recorded bool
	for len(r.events) > 0 {
		if e := <-r.events; e.Type == "tool_call" && e.Call.CallID == "call_late" && e.Result.Output == `{"booked":true}` {
			recorded = true
		}
	}
	if !recorded {
		t.Fatal("the late result was not recorded")
	}
}

// mixedTools answers calls with an odd number at once and holds the others
// until the call ends, counting the calls in Execute.
type mixedTools struct {
	started  chan struct{}
	inflight atomic.Int32
}

func (m *mixedTools) Execute(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
	m.inflight.Add(1)
	defer m.inflight.Add(-1)
	m.started <- struct{}{}
	var n int
	fmt.Sscanf(call.CallID, "call_%d", &n)
	if n%2 == 0 {
		<-ctx.Done()
		return agentline.ToolResult{}, ctx.Err()
	}
	return agentline.ToolResult{CallID: call.CallID, Output: `{"n":` + fmt.Sprint(n) + `}`}, nil
}

// Tool calls answered and pending, agent audio, barge-ins and caller audio
// all at once, then the caller hangs up: under -race, whatever they share is
// shared safely, and Run returns with no tool call left running and nothing
// reported after it.
func TestToolsAudioAndBargeInsAsTheCallEnds(t *testing.T) {
	const calls = 20
	tools := &mixedTools{started: make(chan struct{}, calls)}
	r := newRig(t, rigOptions{tools: tools})
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range calls {
		r.modelSend(map[string]any{"type": "response.created"})
		r.modelSend(map[string]any{"type": "response.function_call_arguments.done", "call_id": fmt.Sprintf("call_%d", i), "name": "lookup", "arguments": `{}`})
		r.modelSend(delta(fmt.Sprintf("item_%d", i), 60, rng))
		r.sendFrame(i, randomFrame(rng))
		if i%5 == 4 {
			r.modelSend(map[string]any{"type": "input_audio_buffer.speech_started"})
		}
		r.modelSend(map[string]any{"type": "response.done"})
	}
	for range calls {
		select {
		case <-tools.started:
		case <-r.ctx.Done():
			t.Fatal("not every tool call started")
		}
	}
	r.send(`{"event":"stop","streamSid":"MZ1","stop":{}}`)
	res := r.waitResult()
	if n := tools.inflight.Load(); n != 0 {
		t.Fatalf("Run returned with %d tool calls running", n)
	}
	if res.Reason != relay.EndCallerHangup {
		t.Fatalf("reason = %s", res.Reason)
	}
	if n := r.lateEvents.Load(); n != 0 {
		t.Fatalf("%d events reported after Run returned", n)
	}
}
