package telephony_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

func TestTransferCallTool(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	path := fmt.Sprintf("/api/agents/%d", e.ada)
	if res := e.do(e.owner, "PATCH", path, map[string]any{"transfer_number": "555-0123"}); res.status != 400 || res.errorCode() != "invalid_request" {
		t.Fatalf("bad transfer number: %d %s", res.status, res.body)
	}
	if res := e.do(e.owner, "PATCH", path, map[string]any{"transfer_number": "+14155550123", "analysis": map[string]any{"summary": true}}); res.status != 200 || !strings.Contains(string(res.body), `"transfer_number":"+14155550123"`) {
		t.Fatalf("set transfer number: %d %s", res.status, res.body)
	}
	c, ss := e.call(ctx, true)
	if ev, _ := ss.WaitType(ctx, "session.update"); !strings.Contains(string(ev.Raw), `"name":"transfer_call"`) {
		t.Fatalf("transfer_call is not offered: %s", ev.Raw)
	}
	lastWordsThenTool(ctx, ss, "item_3", frame(1), "call_7", "transfer_call")
	waitClosed(t, c, ss)
	if len(c.Audio()) != callsim.FrameBytes {
		t.Fatal("the agent's last words did not play before the transfer")
	}
	var twiml string
	for _, call := range e.fake.Calls() {
		if call.SID == c.CallSID {
			twiml = call.Twiml
		}
	}
	if !strings.Contains(twiml, `<Dial callerId="`+e.number+`">+14155550123</Dial>`) {
		t.Fatalf("carrier TwiML = %q", twiml)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var rec map[string]any
		e.do(e.viewer, "GET", "/api/calls/"+c.CallSID, nil).json(&rec)
		if rec["end_reason"] == "transferred" {
			if rec["status"] != "in-progress" || !strings.Contains(fmt.Sprint(rec["events"]), "transfer_call") {
				t.Fatalf("record = %v", rec)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("record = %v", rec)
		}
		time.Sleep(10 * time.Millisecond)
	}
	transferredCallAnalysed(t, e, c.CallSID)
}

// transferredCallAnalysed ends the transferred call sid as the carrier
// does, later, and checks that its analysis starts then: pending, with
// nothing waiting for a log the relay wrote whole at the transfer.
func transferredCallAnalysed(t *testing.T, e *phoneEnv, sid string) {
	t.Helper()
	ctx := context.Background()
	done := url.Values{"CallSid": {sid}, "CallStatus": {"completed"}, "Direction": {"inbound"}, "CallDuration": {"40"}}
	if r := e.postForm("/api/telephony/status", done, e.fake.AuthToken()); r.status != http.StatusNoContent {
		t.Fatalf("status callback: %d %s", r.status, r.body)
	}
	call, err := e.app.Store.Call(ctx, e.project, sid)
	if err != nil || call.Status != agentline.CallCompleted || call.EndReason != agentline.EndReasonTransferred {
		t.Fatalf("call = %+v (%v)", call, err)
	}
	conv, err := e.app.Store.Conversation(ctx, e.project, agentline.CallConversationID(call.ID))
	if err != nil || conv.Analysis == nil || conv.Analysis.Status != agentline.AnalysisPending {
		t.Fatalf("analysis of the transferred call: %+v (%v)", conv.Analysis, err)
	}
	if n, err := e.app.Store.QueueAnalysesAwaitingLog(ctx, time.Now().Add(time.Hour), 10); err != nil || n != 0 {
		t.Fatalf("%d analyses (%v) waited for a log the relay had written", n, err)
	}
}
