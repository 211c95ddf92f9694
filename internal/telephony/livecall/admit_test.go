package livecall

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// admitEnv is a store with a project, agents and a number, and the live
// path over it, without the carrier or an HTTP server.
type admitEnv struct {
	db            *store.DB
	h             *Handler
	project       int64
	ada, bob, gem int64
}

const (
	secret   = "s3cret"
	ours     = "+14155550100"
	caller   = "+14155550199"
	inSID    = "CA00000000000000000000000000000001"
	outSID   = "CA00000000000000000000000000000002"
	otherSID = "CA00000000000000000000000000000003"
)

func newAdmitEnv(t *testing.T) *admitEnv {
	t.Helper()
	return newAdmitEnvOn(t, storetest.Open(t, store.SQLite))
}

// newAdmitEnvOn is newAdmitEnv on db.
func newAdmitEnvOn(t *testing.T, db *store.DB) *admitEnv {
	t.Helper()
	ctx := context.Background()
	e := &admitEnv{db: db}
	owner, err := e.db.CreateUser(ctx, "owner@example.com", "unused-hash")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.db.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.project = p.ID
	agent := func(name, model string) int64 {
		a := agentline.Agent{ProjectID: p.ID, Name: name, Model: model}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		if a, err = e.db.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	e.ada, e.bob, e.gem = agent("Ada", "gpt-realtime"), agent("Bob", "gpt-realtime"), agent("Gem", "gemini-2.5-flash-native-audio")
	if _, err := e.db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: ours, AgentID: &e.ada,
		Status: agentline.NumberActive, CarrierSID: "PN0001"}); err != nil {
		t.Fatal(err)
	}
	e.h = New(Options{Store: e.db, Secret: secret, Now: time.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return e
}

// inbound records a ringing inbound call to ada's number, as the inbound
// webhook does.
func (e *admitEnv) inbound(t *testing.T, sid string) {
	t.Helper()
	if _, err := e.db.ApplyCallEvent(context.Background(), agentline.CallEvent{CallSID: sid, Status: agentline.CallRinging,
		Direction: agentline.CallInbound, From: caller, To: ours}, conversation.CallChanged); err != nil {
		t.Fatal(err)
	}
}

// outbound reserves an outbound call of the agent with stream ref, as
// placing a call does before the carrier answers.
func (e *admitEnv) outbound(t *testing.T, agentID int64, ref string) agentline.Call {
	t.Helper()
	c, err := e.db.ReserveCall(context.Background(), agentline.Call{ProjectID: e.project, AgentID: agentID,
		CallSID: agentline.PendingCallSID(ref), Direction: agentline.CallOutbound, From: ours, To: caller,
		Status: agentline.CallQueued, StreamRef: ref}, 10)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func token(agentID int64, ref, direction string, expires time.Time) string {
	return streamtoken.Sign(secret, agentID, ref, direction, expires)
}

// TestAdmitStreamOperation: which start messages admitStream lets reach the
// model, and what it records, without a WebSocket.
func TestAdmitStreamOperation(t *testing.T) {
	t.Parallel()
	soon := time.Now().Add(streamtoken.TTL)
	start := func(sid string, params ...string) streamStart {
		s := streamStart{StreamSID: "MZ0001", CallSID: sid, CustomParameters: map[string]string{}}
		for i := 0; i+1 < len(params); i += 2 {
			s.CustomParameters[params[i]] = params[i+1]
		}
		return s
	}
	cases := []struct {
		name    string
		arrange func(t *testing.T, e *admitEnv) (agentID int64, s streamStart)
		err     error  // errors.Is target
		code    string // error code, when it is an *agentline.Error
		message string // part of the error text
	}{
		{name: "inbound admitted", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			return e.ada, start(inSID, "stream_token", token(e.ada, inSID, agentline.CallInbound, soon))
		}},
		{name: "outbound before the carrier's answer: SID attached", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.outbound(t, e.ada, "sr_1")
			return e.ada, start(outSID, "stream_token", token(e.ada, "sr_1", agentline.CallOutbound, soon), "stream_ref", "sr_1")
		}},
		{name: "outbound after the carrier's answer", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			c := e.outbound(t, e.ada, "sr_1")
			if _, err := e.db.AttachCallSID(context.Background(), e.project, c.ID, outSID, agentline.CallRinging); err != nil {
				t.Fatal(err)
			}
			return e.ada, start(outSID, "stream_token", token(e.ada, "sr_1", agentline.CallOutbound, soon), "stream_ref", "sr_1")
		}},
		{name: "no streamSid", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			s := start(inSID, "stream_token", token(e.ada, inSID, agentline.CallInbound, soon))
			s.StreamSID = ""
			return e.ada, s
		}, message: "without streamSid"},
		{name: "no token", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			return e.ada, start(inSID)
		}, err: streamtoken.ErrInvalid},
		{name: "token forged", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			return e.ada, start(inSID, "stream_token", streamtoken.Sign("not-the-secret", e.ada, inSID, agentline.CallInbound, soon))
		}, err: streamtoken.ErrInvalid, message: "bad signature"},
		{name: "token expired", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			return e.ada, start(inSID, "stream_token", token(e.ada, inSID, agentline.CallInbound, time.Now().Add(-time.Second)))
		}, err: streamtoken.ErrInvalid, message: "expired"},
		{name: "token of another agent", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			return e.ada, start(inSID, "stream_token", token(e.bob, inSID, agentline.CallInbound, soon))
		}, err: streamtoken.ErrInvalid, message: "another agent"},
		{name: "inbound token of another call", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			return e.ada, start(inSID, "stream_token", token(e.ada, otherSID, agentline.CallInbound, soon))
		}, message: "issued for another call"},
		{name: "outbound stream_ref not the token's", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.outbound(t, e.ada, "sr_1")
			return e.ada, start(outSID, "stream_token", token(e.ada, "sr_1", agentline.CallOutbound, soon), "stream_ref", "sr_2")
		}, message: "stream_ref does not match"},
		{name: "outbound record of another call", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			c := e.outbound(t, e.ada, "sr_1")
			if _, err := e.db.AttachCallSID(context.Background(), e.project, c.ID, otherSID, agentline.CallRinging); err != nil {
				t.Fatal(err)
			}
			return e.ada, start(outSID, "stream_token", token(e.ada, "sr_1", agentline.CallOutbound, soon), "stream_ref", "sr_1")
		}, message: "issued for another call"},
		{name: "token without a direction", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			return e.ada, start(inSID, "stream_token", token(e.ada, inSID, "", soon))
		}, message: "without a direction"},
		{name: "no such call", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			return e.ada, start(inSID, "stream_token", token(e.ada, inSID, agentline.CallInbound, soon))
		}, err: agentline.ErrNotFound, message: "call record"},
		{name: "call of another agent", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID) // a call to ada's number
			return e.bob, start(inSID, "stream_token", token(e.bob, inSID, agentline.CallInbound, soon))
		}, message: "belongs to another agent"},
		{name: "call ended", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			if _, err := e.db.ApplyCallEvent(context.Background(), agentline.CallEvent{CallSID: inSID, Status: agentline.CallCompleted}, conversation.CallChanged); err != nil {
				t.Fatal(err)
			}
			return e.ada, start(inSID, "stream_token", token(e.ada, inSID, agentline.CallInbound, soon))
		}, message: "has ended"},
		{name: "token used already (a replay)", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.inbound(t, inSID)
			s := start(inSID, "stream_token", token(e.ada, inSID, agentline.CallInbound, soon))
			if _, err := e.h.admitStream(context.Background(), e.ada, s, ""); err != nil {
				t.Fatal(err)
			}
			return e.ada, s
		}, code: agentline.EConflict, message: "used already"},
		{name: "outbound token used already", arrange: func(t *testing.T, e *admitEnv) (int64, streamStart) {
			e.outbound(t, e.ada, "sr_1")
			s := start(outSID, "stream_token", token(e.ada, "sr_1", agentline.CallOutbound, soon), "stream_ref", "sr_1")
			if _, err := e.h.admitStream(context.Background(), e.ada, s, ""); err != nil {
				t.Fatal(err)
			}
			return e.ada, s
		}, code: agentline.EConflict, message: "used already"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newAdmitEnv(t)
			agentID, s := tc.arrange(t, e)
			sc, err := e.h.admitStream(context.Background(), agentID, s, "")
			refused := tc.err != nil || tc.code != "" || tc.message != ""
			if !refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if sc.call.CallSID != s.CallSID || sc.call.Status != agentline.CallInProgress || sc.agent.ID != agentID || sc.start.StreamSID != s.StreamSID {
					t.Fatalf("admitted %+v", sc)
				}
				if rec, err := e.db.Call(context.Background(), e.project, s.CallSID); err != nil || rec.Status != agentline.CallInProgress {
					t.Fatalf("record %+v %v, want in progress", rec, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("admitted %+v", sc)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v is not %v", err, tc.err)
			}
			if tc.code != "" && agentline.ErrorCode(err) != tc.code {
				t.Errorf("error %v: code %q, want %q", err, agentline.ErrorCode(err), tc.code)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %q does not say %q", err, tc.message)
			}
		})
	}
}
