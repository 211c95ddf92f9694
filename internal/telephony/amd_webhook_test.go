package telephony_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/agentline/agentline"
)

// The machine detection callback is a carrier webhook like the others: a
// request without the carrier's signature is refused (403), a malformed
// one is 400, a verdict about a call we do not know is acknowledged, and a
// verdict about one of our calls shows on its record as answered_by.
func TestMachineDetectionCallback(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	placed := placeMachineTestCall(t, e)
	verdict := func(sid, answeredBy string) url.Values {
		return url.Values{"AccountSid": {e.fake.AccountSID()}, "CallSid": {sid}, "AnsweredBy": {answeredBy}, "MachineDetectionDuration": {"2400"}}
	}
	unknown := "CA00000000000000000000000000000000"
	cases := []struct {
		name   string
		form   url.Values
		token  string
		status int
	}{
		{"unsigned", verdict(placed.CallSID, "machine_start"), "", http.StatusForbidden},
		{"signed with another token", verdict(placed.CallSID, "machine_start"), "not-the-token", http.StatusForbidden},
		{"not a verdict", verdict(placed.CallSID, "robot"), e.fake.AuthToken(), http.StatusBadRequest},
		{"no call", verdict("", "human"), e.fake.AuthToken(), http.StatusBadRequest},
		{"a call we do not know", verdict(unknown, "human"), e.fake.AuthToken(), http.StatusNoContent},
		{"our call", verdict(placed.CallSID, "machine_end_beep"), e.fake.AuthToken(), http.StatusNoContent},
	}
	for _, c := range cases {
		if res := e.postForm("/api/telephony/amd", c.form, c.token); res.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, res.status, res.body, c.status)
		}
	}
	var call agentline.Call
	e.do(e.owner, "GET", "/api/calls/"+placed.CallSID, nil).json(&call)
	if call.AnsweredBy != agentline.AnsweredByMachineEndBeep {
		t.Fatalf("answered_by = %q, want machine_end_beep (only the signed verdict counts)", call.AnsweredBy)
	}
}

// The carrier's final status callback carries machine detection's verdict
// (AnsweredBy); it is recorded with the call's end when the verdict's own
// callback has not come yet, so that the end's follow-ups (a campaign's
// settlement) know a machine answered. A live call's callback leaves it to
// the verdict's callback; the late verdict changes nothing.
func TestStatusCallbackCarriesTheVerdict(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	placed := placeMachineTestCall(t, e)
	status := func(callStatus string) url.Values {
		return url.Values{"AccountSid": {e.fake.AccountSID()}, "CallSid": {placed.CallSID}, "CallStatus": {callStatus},
			"Direction": {"outbound-api"}, "From": {"+14155550100"}, "To": {"+14155550127"}, "AnsweredBy": {"machine_start"}}
	}
	var call agentline.Call
	for _, s := range []string{"in-progress", "completed"} {
		if res := e.postForm("/api/telephony/status", status(s), e.fake.AuthToken()); res.status != http.StatusNoContent {
			t.Fatalf("status %s: %d %s", s, res.status, res.body)
		}
		if e.do(e.owner, "GET", "/api/calls/"+placed.CallSID, nil).json(&call); s == "in-progress" && call.AnsweredBy != "" {
			t.Fatalf("a live call's status callback recorded answered_by %q: the verdict's callback tells the hook", call.AnsweredBy)
		}
	}
	verdict := url.Values{"AccountSid": {e.fake.AccountSID()}, "CallSid": {placed.CallSID}, "AnsweredBy": {"machine_start"}}
	if res := e.postForm("/api/telephony/amd", verdict, e.fake.AuthToken()); res.status != http.StatusNoContent {
		t.Fatalf("verdict: %d %s", res.status, res.body)
	}
	e.do(e.owner, "GET", "/api/calls/"+placed.CallSID, nil).json(&call)
	if call.Status != agentline.CallCompleted || call.AnsweredBy != agentline.AnsweredByMachineStart {
		t.Fatalf("call %s answered by %q, want completed by machine_start", call.Status, call.AnsweredBy)
	}
	if len(e.fake.Calls()[0].Updates) != 0 {
		t.Errorf("the ended call was updated at the carrier: %v", e.fake.Calls()[0].Updates)
	}
}

// placeMachineTestCall places an outbound call from Ada's number, as the
// machine detection tests start.
func placeMachineTestCall(t *testing.T, e *env) (placed struct {
	CallSID string `json:"call_sid"`
}) {
	t.Helper()
	e.provision("+14155550100", e.ada)
	res := e.do(e.owner, "POST", fmt.Sprintf("/api/agents/%d/telephony/outbound", e.ada), map[string]string{"to_number": "+14155550127"})
	if res.status != http.StatusCreated {
		t.Fatalf("outbound: %d %s", res.status, res.body)
	}
	res.json(&placed)
	return placed
}
