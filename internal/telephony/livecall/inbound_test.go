package livecall

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// failingEvents is the real store failing to record a call's event.
type failingEvents struct{ Store }

var errStoreDown = errors.New("the database is down")

func (failingEvents) ApplyCallEvent(context.Context, agentline.CallEvent, agentline.CallFollowUp) (agentline.Call, error) {
	return agentline.Call{}, errStoreDown
}

func (failingEvents) RecordInboundCall(context.Context, agentline.CallEvent, func(agentline.Agent) error, agentline.CallFollowUp) (agentline.Call, agentline.Agent, error) {
	return agentline.Call{}, agentline.Agent{}, errStoreDown
}

// TestAnswerInboundOperation: how answerInbound answers each call coming
// in to Ada's number (or another), what it records, and whether the call's
// stream is then expected here, without HTTP.
func TestAnswerInboundOperation(t *testing.T) {
	t.Parallel()
	const botHost = "bot.example.test"
	ring := inboundRing{CallSID: inSID, To: ours, From: caller, Status: agentline.CallRinging}
	cases := []struct {
		name    string
		arrange func(t *testing.T, e *admitEnv, in *inboundRing)
		code    string // "" for an answer
		err     error
		// said is what the caller hears instead of the agent ("" when the
		// call is connected to the agent's stream; "busy" for a rejection).
		said     string
		recorded string // the call's recorded status, "" for no record
		awaited  bool   // the call's stream is expected here
		gem      bool   // the number is the Gemini agent's
	}{
		{name: "connected to the agent's stream", recorded: agentline.CallRinging, awaited: true},
		{name: "in progress already", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) { in.Status = agentline.CallInProgress },
			recorded: agentline.CallInProgress, awaited: true},
		{name: "unknown status taken as ringing", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) { in.Status = "dialing" },
			recorded: agentline.CallRinging, awaited: true},
		{name: "malformed CallSid", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) { in.CallSID = "CA-1" }, code: agentline.EInvalid},
		{name: "To not E.164", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) { in.To = "4155550100" }, code: agentline.EInvalid},
		{name: "no BOT_HOST", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) { e.h.host = "" }, code: agentline.ENotConfigured},
		{name: "draining: rejected busy, not recorded", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) { e.h.Drain() }, said: "busy"},
		{name: "unknown number: not in service", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) { in.To = "+14155550111" }, said: notInService},
		{name: "suspended number: not in service", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) {
			e.setNumber(t, func(n *agentline.PhoneNumber) { n.Status = agentline.NumberSuspended })
		}, said: notInService},
		{name: "a Gemini agent's number: connected", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) {
			e.setNumber(t, func(n *agentline.PhoneNumber) { n.AgentID = &e.gem })
		}, recorded: agentline.CallRinging, awaited: true, gem: true},
		{name: "not recorded: no stream expected", arrange: func(t *testing.T, e *admitEnv, in *inboundRing) { e.h.store = failingEvents{e.db} },
			code: agentline.EInternal, err: errStoreDown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newAdmitEnv(t)
			e.h.host = botHost
			in := ring
			if tc.arrange != nil {
				tc.arrange(t, e, &in)
			}
			agent := e.ada
			if tc.gem {
				agent = e.gem
			}
			doc, err := e.h.answerInbound(context.Background(), in)
			if got := agentline.ErrorCode(err); got != tc.code {
				t.Fatalf("error %v: code %q, want %q", err, got, tc.code)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v is not %v", err, tc.err)
			}
			switch {
			case err != nil:
			case tc.said == "busy":
				if doc != rejectBusy {
					t.Errorf("TwiML %s, want a busy rejection", doc)
				}
			case tc.said != "":
				if _, perr := callsim.ParseTwiML(doc); perr == nil || !strings.Contains(perr.Error(), tc.said) {
					t.Errorf("TwiML %s: %v, want the caller to hear %q", doc, perr, tc.said)
				}
			default:
				s, perr := callsim.ParseTwiML(doc)
				if perr != nil {
					t.Fatal(perr)
				}
				claims, verr := streamtoken.Verify(secret, s.Params["stream_token"], agent, time.Now())
				if s.URL != carrier.StreamURL(botHost, agent) || s.Params["call_sid"] != inSID || s.Params["direction"] != agentline.CallInbound ||
					verr != nil || claims.Ref != inSID || claims.Direction != agentline.CallInbound {
					t.Errorf("stream %+v, token %+v %v", s, claims, verr)
				}
			}
			call, cerr := e.db.Call(context.Background(), e.project, inSID)
			switch {
			case tc.recorded == "" && !errors.Is(cerr, agentline.ErrNotFound):
				t.Errorf("recorded %+v (%v), want no record", call, cerr)
			case tc.recorded != "" && (cerr != nil || call.Status != tc.recorded || call.Direction != agentline.CallInbound || call.AgentID != agent || call.From != caller):
				t.Errorf("recorded %+v (%v), want status %q", call, cerr, tc.recorded)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			if awaited := e.h.WaitCalls(ctx) != nil; awaited != tc.awaited {
				t.Errorf("stream awaited: %v, want %v", awaited, tc.awaited)
			}
		})
	}
}

// setNumber changes Ada's number in the store.
func (e *admitEnv) setNumber(t *testing.T, change func(*agentline.PhoneNumber)) {
	t.Helper()
	n, err := e.db.PhoneNumberByE164(context.Background(), ours)
	if err != nil {
		t.Fatal(err)
	}
	change(&n)
	if _, err := e.db.UpdatePhoneNumber(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}
