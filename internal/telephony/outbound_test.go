package telephony

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
)

// TestPlaceCallOperation: what placeCall checks before the carrier is
// asked, and what it leaves at the carrier, in the store and in the live
// registry on each path, the clean-up paths after the carrier has acted
// included.
func TestPlaceCallOperation(t *testing.T) {
	t.Parallel()
	const ours, to = "+14155550100", "+14155550199"
	withNumber := func(t *testing.T, e *opsEnv) agentline.PhoneNumber { return e.number(t, ours, e.ada) }
	cases := []struct {
		name    string
		arrange func(t *testing.T, e *opsEnv)
		agent   func(e *opsEnv) int64
		to      string
		code    string // "" for success
		message string
		err     error
		placed  int  // calls the carrier was asked to place
		hungUp  bool // the placed call was hung up again
		records int  // call records of the project afterwards
		pending bool // the record left still has its pending SID
		awaited bool // a drain would wait for the call's stream
	}{
		{name: "placed", arrange: func(t *testing.T, e *opsEnv) { withNumber(t, e) }, placed: 1, records: 1, awaited: true},
		{name: "not E.164", to: "0155550199", code: agentline.EInvalid, message: "E.164"},
		{name: "draining", arrange: func(t *testing.T, e *opsEnv) { withNumber(t, e); e.h.Drain() }, code: agentline.EUnavailable},
		{name: "a Gemini agent without a number", agent: func(e *opsEnv) int64 { return e.gem }, code: agentline.EInvalid, message: "no phone number to call from"},
		{name: "agent without a number", code: agentline.EInvalid, message: "no phone number to call from"},
		{name: "number suspended", arrange: func(t *testing.T, e *opsEnv) {
			n := withNumber(t, e)
			n.Status = agentline.NumberSuspended
			if _, err := e.db.UpdatePhoneNumber(context.Background(), n); err != nil {
				t.Fatal(err)
			}
		}, code: agentline.EInvalid, message: "make it active"},
		{name: "calling itself", arrange: func(t *testing.T, e *opsEnv) { withNumber(t, e) }, to: ours, code: agentline.EInvalid, message: "own number"},
		{name: "no carrier account", arrange: func(t *testing.T, e *opsEnv) { withNumber(t, e); e.h.carrierAPI = nil }, code: agentline.ENotConfigured},
		{name: "no bot host", arrange: func(t *testing.T, e *opsEnv) { withNumber(t, e); e.h.host = "" }, code: agentline.ENotConfigured, message: "BOT_HOST"},
		{name: "concurrency cap", arrange: func(t *testing.T, e *opsEnv) {
			withNumber(t, e)
			e.h.maxCalls = 1
			if _, err := e.h.placeCall(context.Background(), e.project, e.ada, "+14155550198"); err != nil {
				t.Fatal(err)
			}
		}, code: agentline.ERateLimited, placed: 1, records: 1, awaited: true},
		{name: "carrier refuses: record removed", arrange: func(t *testing.T, e *opsEnv) {
			withNumber(t, e)
			e.fake.FailNext(400, 21211, "Invalid 'To' Phone Number")
		}, code: agentline.ECarrier, message: "Invalid 'To' Phone Number"},
		{name: "placed, not recorded: hung up, reserved record kept", arrange: func(t *testing.T, e *opsEnv) {
			withNumber(t, e)
			e.store.attach = storeDown
		}, code: agentline.EInternal, err: errStoreDown, placed: 1, hungUp: true, records: 1, pending: true, awaited: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newOpsEnv(t, nil)
			if tc.arrange != nil {
				tc.arrange(t, e)
			}
			agentID, dial := e.ada, tc.to
			if tc.agent != nil {
				agentID = tc.agent(e)
			}
			if dial == "" {
				dial = to
			}
			call, err := e.h.placeCall(context.Background(), e.project, agentID, dial)
			wantCode(t, err, tc.code)
			if tc.message != "" && !strings.Contains(agentline.ErrorMessage(err), tc.message) {
				t.Errorf("message %q does not contain %q", agentline.ErrorMessage(err), tc.message)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v is not %v", err, tc.err)
			}
			if err == nil && (!strings.HasPrefix(call.CallSID, "CA") || call.Status != agentline.CallQueued || call.From != ours || call.To != to || call.Direction != agentline.CallOutbound) {
				t.Errorf("call = %+v", call)
			}
			placed := e.fake.Calls()
			var toUs []string
			for _, c := range placed {
				if c.To == to {
					toUs = append(toUs, c.Status)
				}
			}
			if len(placed) != tc.placed {
				t.Fatalf("placed at the carrier: %+v, want %d", placed, tc.placed)
			}
			// Hung up before it was answered: canceled at the carrier.
			if tc.hungUp != (len(toUs) == 1 && toUs[0] == agentline.CallCanceled) {
				t.Errorf("status at the carrier: %v, hung up: %v", toUs, tc.hungUp)
			}
			records, err := e.db.Calls(context.Background(), e.project, agentline.CallFilter{Limit: 50})
			if err != nil || len(records) != tc.records {
				t.Fatalf("records: %+v %v, want %d", records, err, tc.records)
			}
			if tc.pending && (records[0].CallSID != agentline.PendingCallSID(records[0].StreamRef) || records[0].Status != agentline.CallQueued) {
				t.Errorf("record left: %+v, want the reserved one", records[0])
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			if awaited := e.h.WaitCalls(ctx) != nil; awaited != tc.awaited {
				t.Errorf("stream awaited: %v, want %v", awaited, tc.awaited)
			}
		})
	}
}
