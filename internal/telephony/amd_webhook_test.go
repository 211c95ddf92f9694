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
	e.provision("+14155550100", e.ada)
	res := e.do(e.owner, "POST", fmt.Sprintf("/api/agents/%d/telephony/outbound", e.ada), map[string]string{"to_number": "+14155550127"})
	if res.status != http.StatusCreated {
		t.Fatalf("outbound: %d %s", res.status, res.body)
	}
	var placed struct {
		CallSID string `json:"call_sid"`
	}
	res.json(&placed)
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
