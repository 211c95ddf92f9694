package telephony_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// A webhook tool whose endpoint never answers, mid-call: the model gets a
// timeout tool error as the function_call_output within the tool's timeout
// and a response.create, audio keeps flowing both ways meanwhile, agentline
// hangs up on the webhook, and the call's record holds the failed tool call.
func TestToolCallHangingMidCall(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	released := make(chan struct{}, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices a hang-up only once the body is read
		arrived <- struct{}{}
		<-r.Context().Done()
		released <- struct{}{}
	}))
	defer hook.Close()
	e := newPhoneEnv(t, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	res := e.do(e.owner, "POST", fmt.Sprintf("/api/agents/%d/tools", e.ada), map[string]any{
		"name": "check_stock", "description": "Checks stock.", "url": hook.URL, "timeout_ms": 700,
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"sku": map[string]any{"type": "string"}}},
	})
	if res.status != 201 {
		t.Fatalf("create tool: %d %s", res.status, res.body)
	}
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	ss.Send(ctx, map[string]any{"type": "response.created"})
	start := time.Now()
	ss.Send(ctx, map[string]any{"type": "response.function_call_arguments.done", "call_id": "call_7", "name": "check_stock", "arguments": `{"sku":"A-1"}`})
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatal("the webhook was not called")
	}
	// Audio flows both ways while the tool hangs.
	c.SendMedia(ctx, frame(3))
	if _, err := ss.WaitAudio(ctx, 1); err != nil {
		t.Fatal(err)
	}
	delta := base64.StdEncoding.EncodeToString(frame(4))
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_2", "delta": delta})
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Payload == delta }); err != nil {
		t.Fatal(err)
	}
	ss.Send(ctx, map[string]any{"type": "response.done"})
	out, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool {
		return ev.Type == "conversation.item.create" && strings.Contains(string(ev.Raw), "function_call_output")
	})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if raw := string(out.Raw); !strings.Contains(raw, `"call_id":"call_7"`) || !strings.Contains(raw, `\"code\":\"timeout\"`) {
		t.Fatalf("output item = %s", raw)
	}
	if elapsed > 5*time.Second {
		t.Fatalf("the tool error reached the model after %v with a 700ms timeout", elapsed)
	}
	t.Logf("timeout tool error reached the model %v after the call", elapsed)
	if _, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool { return ev.Type == "response.create" }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	case <-ctx.Done():
		t.Fatal("agentline did not hang up on the webhook")
	}
	c.Stop(ctx)
	rec := e.record(c.CallSID)
	if events := fmt.Sprint(rec["events"]); !strings.Contains(events, "type:tool_call") || !strings.Contains(events, "check_stock") || !strings.Contains(events, "timeout") {
		t.Fatalf("events = %s", events)
	}
}
