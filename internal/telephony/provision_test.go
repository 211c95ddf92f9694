package telephony

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
)

// TestProvisionNumberOperation: what provisionNumber checks before paying,
// and what it leaves at the carrier and in the store on each path, the
// clean-up paths after a purchase included.
func TestProvisionNumberOperation(t *testing.T) {
	t.Parallel()
	const phone = "+14155550100"
	cases := []struct {
		name    string
		arrange func(t *testing.T, e *opsEnv)
		phone   string
		agent   func(e *opsEnv) int64
		code    string // "" for success
		message string // part of the error's message
		err     error  // the error itself, when it is not an *agentline.Error
		owned   int    // numbers the account owns at the carrier afterwards
		release int    // numbers bought and released again
		stored  int    // number records of the project afterwards
	}{
		{name: "bought and stored", agent: func(e *opsEnv) int64 { return e.ada }, owned: 1, stored: 1},
		{name: "not E.164", phone: "4155550100", agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.EInvalid, message: "E.164"},
		{name: "not a US number", phone: "+442071838750", agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.EInvalid, message: "only US"},
		{name: "no agent", agent: func(e *opsEnv) int64 { return 0 }, code: agentline.EInvalid, message: "agent_id is required"},
		{name: "agent of another project", agent: func(e *opsEnv) int64 { return e.eve }, code: agentline.EInvalid, message: "not in this project"},
		{name: "a Gemini agent", agent: func(e *opsEnv) int64 { return e.gem }, owned: 1, stored: 1},
		{name: "agent already has a number", arrange: func(t *testing.T, e *opsEnv) { e.number(t, "+14155550101", e.ada) },
			agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.EConflict, message: "already has phone number", owned: 1, stored: 1},
		{name: "number already provisioned here", arrange: func(t *testing.T, e *opsEnv) { e.number(t, phone, e.bob) },
			agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.EConflict, message: "already provisioned in this project", owned: 1, stored: 1},
		{name: "no carrier account", arrange: func(t *testing.T, e *opsEnv) { e.h.carrierAPI = nil },
			agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.ENotConfigured, message: "TWILIO_ACCOUNT_SID"},
		{name: "no bot host", arrange: func(t *testing.T, e *opsEnv) { e.h.host = "" },
			agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.ENotConfigured, message: "BOT_HOST"},
		{name: "carrier refuses the purchase", arrange: func(t *testing.T, e *opsEnv) { e.fake.FailNext(400, 21422, "PhoneNumber is not available") },
			agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.ECarrier, message: "PhoneNumber is not available"},
		{name: "bought, not stored: released again", arrange: func(t *testing.T, e *opsEnv) { e.store.createNumber = storeDown },
			agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.EInternal, err: errStoreDown, release: 1},
		{name: "bought, not stored, release refused: kept at the carrier", arrange: func(t *testing.T, e *opsEnv) {
			e.store.createNumber = func() error {
				e.fake.FailNext(500, 20500, "release down") // the purchase has passed; the release fails
				return errStoreDown
			}
		}, agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.EInternal, err: errStoreDown, owned: 1},
		{name: "sold, answer lost: released again", arrange: func(t *testing.T, e *opsEnv) {
			e.carrierTimeout(t, 300*time.Millisecond)
			e.fake.AnswerLateNext(3 * time.Second)
		}, agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.ECarrier, message: "released again", release: 1},
		{name: "not sold, no answer", arrange: func(t *testing.T, e *opsEnv) {
			e.carrierTimeout(t, 300*time.Millisecond)
			t.Cleanup(e.fake.HoldNext().Release)
		}, agent: func(e *opsEnv) int64 { return e.ada }, code: agentline.ECarrier, message: "nothing is billed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newOpsEnv(t, nil)
			if tc.arrange != nil {
				tc.arrange(t, e)
			}
			p := tc.phone
			if p == "" {
				p = phone
			}
			n, err := e.h.provisionNumber(context.Background(), e.project, p, tc.agent(e))
			wantCode(t, err, tc.code)
			if tc.message != "" && !strings.Contains(agentline.ErrorMessage(err), tc.message) {
				t.Errorf("message %q does not contain %q", agentline.ErrorMessage(err), tc.message)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v is not %v", err, tc.err)
			}
			if err == nil && (n.ID == 0 || n.PhoneNumber != phone || n.Status != agentline.NumberActive || n.AgentID == nil || *n.AgentID != tc.agent(e) || n.CarrierSID == "") {
				t.Errorf("number = %+v", n)
			}
			if owned := e.fake.Numbers(); len(owned) != tc.owned {
				t.Errorf("owned at the carrier: %+v, want %d", owned, tc.owned)
			}
			if released := e.fake.Released(); len(released) != tc.release {
				t.Errorf("released: %+v, want %d", released, tc.release)
			}
			if list, _ := e.db.PhoneNumbers(context.Background(), e.project); len(list) != tc.stored {
				t.Errorf("records: %+v, want %d", list, tc.stored)
			}
		})
	}
}
