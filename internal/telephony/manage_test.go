package telephony

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
)

// The table tests of the management operations the handlers of
// DELETE .../calls/{call_sid}, DELETE .../numbers/{number_id} and
// PATCH .../numbers/{number_id} call, without HTTP: what each checks, and
// what it leaves at the carrier and in the store on each path, the paths
// after the carrier has acted included.

// TestHangUpCallOperation: hangUpCall on a call placed through the fake
// carrier (or, for a call the carrier does not know, a record alone).
func TestHangUpCallOperation(t *testing.T) {
	t.Parallel()
	const ours, to = "+14155550100", "+14155550199"
	const unknownSID = "CA0123456789abcdef0123456789abcdef"
	cases := []struct {
		name    string
		arrange func(t *testing.T, e *opsEnv, placed agentline.Call) (agentID int64, sid string)
		code    string // "" for success
		message string
		err     error
		// what the call's record and the carrier's call are afterwards
		status, endReason string
		atCarrier         string // "" when the carrier does not know the call
	}{
		// Hung up before it was answered, a call is canceled: completed is
		// for a call that was answered (docs/phone.md, Twilio's statuses).
		{name: "hung up and recorded", status: agentline.CallCanceled, endReason: "api_hangup", atCarrier: agentline.CallCanceled},
		{name: "answered, hung up: completed", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) {
			e.fake.SetCallStatus(c.CallSID, agentline.CallInProgress)
			return e.ada, c.CallSID
		}, status: agentline.CallCompleted, endReason: "api_hangup", atCarrier: agentline.CallCompleted},
		{name: "not a call SID", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) { return e.ada, "CA-1" },
			code: agentline.ENotFound, status: agentline.CallQueued, atCarrier: agentline.CallQueued},
		{name: "no such call", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) { return e.ada, unknownSID },
			code: agentline.ENotFound, status: agentline.CallQueued, atCarrier: agentline.CallQueued},
		{name: "call of another agent", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) { return e.bob, c.CallSID },
			code: agentline.ENotFound, status: agentline.CallQueued, atCarrier: agentline.CallQueued},
		{name: "ended already: the carrier is not asked", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) {
			if _, err := e.db.ApplyCallEvent(context.Background(), agentline.CallEvent{CallSID: c.CallSID, Status: agentline.CallNoAnswer}, conversation.CallChanged); err != nil {
				t.Fatal(err)
			}
			return e.ada, c.CallSID
		}, code: agentline.EConflict, message: "already ended", status: agentline.CallNoAnswer, atCarrier: agentline.CallQueued},
		{name: "no carrier account", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) {
			e.h.carrierAPI = nil
			return e.ada, c.CallSID
		}, code: agentline.ENotConfigured, status: agentline.CallQueued, atCarrier: agentline.CallQueued},
		{name: "carrier refuses: record unchanged", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) {
			e.fake.FailNext(500, 20500, "Internal Server Error")
			return e.ada, c.CallSID
		}, code: agentline.ECarrier, status: agentline.CallQueued, atCarrier: agentline.CallQueued},
		{name: "unknown to the carrier: record closed", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) {
			if _, err := e.db.AttachCallSID(context.Background(), e.project, c.ID, unknownSID, agentline.CallInProgress); err != nil {
				t.Fatal(err)
			}
			return e.ada, unknownSID
		}, code: agentline.EConflict, message: "no longer knows it", status: agentline.CallCompleted, endReason: "unknown to the carrier"},
		{name: "hung up, not recorded: the carrier's end stands", arrange: func(t *testing.T, e *opsEnv, c agentline.Call) (int64, string) {
			e.store.applyEvent = storeDown
			return e.ada, c.CallSID
		}, code: agentline.EInternal, err: errStoreDown, status: agentline.CallQueued, atCarrier: agentline.CallCanceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newOpsEnv(t, nil)
			e.number(t, ours, e.ada)
			placed, err := e.h.placeCall(context.Background(), e.project, e.ada, to)
			if err != nil {
				t.Fatal(err)
			}
			agentID, sid := e.ada, placed.CallSID
			if tc.arrange != nil {
				agentID, sid = tc.arrange(t, e, placed)
			}
			status, err := e.h.hangUpCall(context.Background(), e.project, agentID, sid)
			wantCode(t, err, tc.code)
			if tc.message != "" && !strings.Contains(agentline.ErrorMessage(err), tc.message) {
				t.Errorf("message %q does not contain %q", agentline.ErrorMessage(err), tc.message)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v is not %v", err, tc.err)
			}
			if err == nil && status != tc.status {
				t.Errorf("status = %q", status)
			}
			e.store.applyEvent = nil
			records, err := e.db.Calls(context.Background(), e.project, agentline.CallFilter{Limit: 10})
			if err != nil || len(records) != 1 {
				t.Fatalf("records: %+v %v", records, err)
			}
			if r := records[0]; r.Status != tc.status || r.EndReason != tc.endReason {
				t.Errorf("record: status %q, end reason %q; want %q, %q", r.Status, r.EndReason, tc.status, tc.endReason)
			}
			var atCarrier string
			for _, c := range e.fake.Calls() {
				if c.SID == records[0].CallSID {
					atCarrier = c.Status
				}
			}
			if atCarrier != tc.atCarrier {
				t.Errorf("at the carrier: %q, want %q", atCarrier, tc.atCarrier)
			}
		})
	}
}

// TestReleaseNumberOperation: releaseProvisioned on a number bought from
// the fake carrier.
func TestReleaseNumberOperation(t *testing.T) {
	t.Parallel()
	const phone = "+14155550100"
	cases := []struct {
		name    string
		arrange func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) (projectID, numberID int64)
		code    string // "" for success
		err     error
		owned   int // numbers the account owns at the carrier afterwards
		stored  int // number records of the project afterwards
		// retried: the release is asked again, with the store well, and
		// succeeds (what a client does after the failure)
		retried bool
	}{
		{name: "released and deleted"},
		{name: "no such number", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) (int64, int64) { return e.project, n.ID + 100 },
			code: agentline.ENotFound, owned: 1, stored: 1},
		{name: "number of another project", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) (int64, int64) {
			return e.otherProject, n.ID
		}, code: agentline.ENotFound, owned: 1, stored: 1},
		{name: "no carrier account", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) (int64, int64) {
			e.h.carrierAPI = nil
			return e.project, n.ID
		}, code: agentline.ENotConfigured, owned: 1, stored: 1},
		{name: "carrier refuses: record kept", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) (int64, int64) {
			e.fake.FailNext(500, 20500, "Internal Server Error")
			return e.project, n.ID
		}, code: agentline.ECarrier, owned: 1, stored: 1},
		{name: "gone at the carrier: record deleted", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) (int64, int64) {
			e.fake.FailNext(404, 20404, "The requested resource was not found")
			return e.project, n.ID
		}, owned: 1},
		{name: "released, record not deleted: a retry deletes it", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) (int64, int64) {
			e.store.deleteNumber = storeDown
			return e.project, n.ID
		}, code: agentline.EInternal, err: errStoreDown, retried: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newOpsEnv(t, nil)
			n := e.number(t, phone, e.ada)
			projectID, numberID := e.project, n.ID
			if tc.arrange != nil {
				projectID, numberID = tc.arrange(t, e, n)
			}
			err := e.h.releaseProvisioned(context.Background(), projectID, numberID)
			wantCode(t, err, tc.code)
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v is not %v", err, tc.err)
			}
			if tc.retried {
				e.store.deleteNumber = nil
				if err := e.h.releaseProvisioned(context.Background(), projectID, numberID); err != nil {
					t.Fatalf("retry: %v", err)
				}
			}
			if owned := e.fake.Numbers(); len(owned) != tc.owned {
				t.Errorf("owned at the carrier: %+v, want %d", owned, tc.owned)
			}
			if list, _ := e.db.PhoneNumbers(context.Background(), e.project); len(list) != tc.stored {
				t.Errorf("records: %+v, want %d", list, tc.stored)
			}
		})
	}
}

// TestChangeNumberOperation: changeNumber on a number of Ada's, active.
func TestChangeNumberOperation(t *testing.T) {
	t.Parallel()
	status := func(s agentline.NumberStatus) *agentline.NumberStatus { return &s }
	id := func(v int64) *int64 { return &v }
	cases := []struct {
		name    string
		arrange func(t *testing.T, e *opsEnv, n agentline.PhoneNumber)
		change  func(e *opsEnv) numberChange
		code    string // "" for success
		message string
		// the number afterwards: its status and agent (0 for none)
		status agentline.NumberStatus
		agent  func(e *opsEnv) int64
	}{
		{name: "nothing to change", change: func(e *opsEnv) numberChange { return numberChange{} },
			code: agentline.EInvalid, message: "send status", status: agentline.NumberActive},
		{name: "unknown status", change: func(e *opsEnv) numberChange { return numberChange{Status: status("paused")} },
			code: agentline.EInvalid, message: `not "paused"`, status: agentline.NumberActive},
		{name: "suspended keeps the agent", change: func(e *opsEnv) numberChange { return numberChange{Status: status(agentline.NumberSuspended)} },
			status: agentline.NumberSuspended},
		{name: "unassigned unlinks the agent", change: func(e *opsEnv) numberChange { return numberChange{Status: status(agentline.NumberUnassigned)} },
			status: agentline.NumberUnassigned, agent: func(e *opsEnv) int64 { return 0 }},
		{name: "relinked to another agent and active", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) {
			n.Status = agentline.NumberSuspended
			if _, err := e.db.UpdatePhoneNumber(context.Background(), n); err != nil {
				t.Fatal(err)
			}
		}, change: func(e *opsEnv) numberChange { return numberChange{AgentID: id(e.bob)} },
			status: agentline.NumberActive, agent: func(e *opsEnv) int64 { return e.bob }},
		{name: "relinked and suspended", change: func(e *opsEnv) numberChange {
			return numberChange{AgentID: id(e.bob), Status: status(agentline.NumberSuspended)}
		}, status: agentline.NumberSuspended, agent: func(e *opsEnv) int64 { return e.bob }},
		{name: "linked and unassigned at once", change: func(e *opsEnv) numberChange {
			return numberChange{AgentID: id(e.bob), Status: status(agentline.NumberUnassigned)}
		}, code: agentline.EInvalid, message: "cannot be unassigned", status: agentline.NumberActive},
		{name: "agent id not positive", change: func(e *opsEnv) numberChange { return numberChange{AgentID: id(0)} },
			code: agentline.EInvalid, message: "positive id", status: agentline.NumberActive},
		{name: "agent of another project", change: func(e *opsEnv) numberChange { return numberChange{AgentID: id(e.eve)} },
			code: agentline.EInvalid, message: "not in this project", status: agentline.NumberActive},
		{name: "a Gemini agent", change: func(e *opsEnv) numberChange { return numberChange{AgentID: id(e.gem)} },
			agent: func(e *opsEnv) int64 { return e.gem }, status: agentline.NumberActive},
		{name: "agent with a number of its own", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) { e.number(t, "+14155550101", e.bob) },
			change: func(e *opsEnv) numberChange { return numberChange{AgentID: id(e.bob)} },
			code:   agentline.EConflict, message: "already has phone number", status: agentline.NumberActive},
		{name: "active without an agent", arrange: func(t *testing.T, e *opsEnv, n agentline.PhoneNumber) {
			if _, err := e.h.changeNumber(context.Background(), e.project, n.ID, numberChange{Status: status(agentline.NumberUnassigned)}); err != nil {
				t.Fatal(err)
			}
		}, change: func(e *opsEnv) numberChange { return numberChange{Status: status(agentline.NumberActive)} },
			code: agentline.EInvalid, message: "has no agent", status: agentline.NumberUnassigned, agent: func(e *opsEnv) int64 { return 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newOpsEnv(t, nil)
			n := e.number(t, "+14155550100", e.ada)
			if tc.arrange != nil {
				tc.arrange(t, e, n)
			}
			got, err := e.h.changeNumber(context.Background(), e.project, n.ID, tc.change(e))
			wantCode(t, err, tc.code)
			if tc.message != "" && !strings.Contains(agentline.ErrorMessage(err), tc.message) {
				t.Errorf("message %q does not contain %q", agentline.ErrorMessage(err), tc.message)
			}
			stored, serr := e.db.PhoneNumber(context.Background(), e.project, n.ID)
			if serr != nil {
				t.Fatal(serr)
			}
			if err == nil && (got.ID != stored.ID || got.Status != stored.Status) {
				t.Errorf("answered %+v, stored %+v", got, stored)
			}
			wantAgent := e.ada
			if tc.agent != nil {
				wantAgent = tc.agent(e)
			}
			var agent int64
			if stored.AgentID != nil {
				agent = *stored.AgentID
			}
			if stored.Status != tc.status || agent != wantAgent {
				t.Errorf("stored: status %q, agent %d; want %q, %d", stored.Status, agent, tc.status, wantAgent)
			}
		})
	}
	if _, err := newOpsEnv(t, nil).h.changeNumber(context.Background(), 1, 999, numberChange{Status: status(agentline.NumberSuspended)}); agentline.ErrorCode(err) != agentline.ENotFound {
		t.Errorf("unknown number: %v, want not_found", err)
	}
}
