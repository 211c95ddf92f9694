package relay_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// replyTools answers every call at once, after asking the relay to end
// the call once the agent has answered it (as opt_out does).
type replyTools struct{ rc chan *relay.Call }

func (r replyTools) Execute(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
	c := <-r.rc
	r.rc <- c
	c.EndAfterReply()
	return agentline.ToolResult{CallID: call.CallID, Output: `{"ok":true}`}, nil
}

// A tool that ends the call after the agent's reply: its output still gets
// its response.create, the call goes on while the previous words play and
// while the reply is asked for, and ends once the reply's audio has
// played, as end_call's last words do.
func TestEndAfterReply(t *testing.T) {
	tools := replyTools{rc: make(chan *relay.Call, 1)}
	r := newRig(t, rigOptions{tools: tools})
	tools.rc <- <-r.call
	rng := rand.New(rand.NewPCG(5, 6))
	r.modelSend(map[string]any{"type": "response.created"})
	r.modelSend(map[string]any{"type": "response.function_call_arguments.done", "call_id": "call_o", "name": "opt_out", "arguments": "{}"})
	r.modelSend(map[string]any{"type": "response.done"})
	if _, err := r.model.WaitFor(r.ctx, func(e realtimefake.Event) bool { return e.Type == "response.create" }); err != nil {
		t.Fatal(err)
	}
	var output bool
	for _, e := range r.model.Events() {
		output = output || strings.Contains(string(e.Raw), "function_call_output")
	}
	if !output {
		t.Fatal("no function_call_output before the response.create")
	}
	select {
	case res := <-r.result:
		t.Fatalf("ended before the reply: %+v", res)
	case <-time.After(200 * time.Millisecond):
	}
	r.modelSend(map[string]any{"type": "response.created"})
	r.modelSend(delta("item_bye", 100, rng))
	r.modelSend(map[string]any{"type": "response.output_audio.done", "item_id": "item_bye"})
	r.modelSend(map[string]any{"type": "response.done"})
	var mark string
	for mark == "" {
		if m := r.readCarrier(); m.Event == "mark" {
			mark = m.Mark.Name
		}
	}
	select {
	case res := <-r.result:
		t.Fatalf("ended before the reply played: %+v", res)
	case <-time.After(200 * time.Millisecond):
	}
	r.send(fmt.Sprintf(`{"event":"mark","streamSid":"MZ1","mark":{"name":%q}}`, mark))
	if res := r.waitResult(); res.Reason != relay.EndAgentHangup {
		t.Fatalf("reason = %s", res.Reason)
	}
}
