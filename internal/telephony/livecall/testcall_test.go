package livecall

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

const testSID = "CA00000000000000000000000000000009"

// testCall records a queued test call of the agent, as POST
// /api/agents/{agent_id}/test-calls does, and returns its token.
func (e *admitEnv) testCall(t *testing.T, agentID int64, sid string, expires time.Time) string {
	t.Helper()
	if _, err := e.db.ReserveCall(context.Background(), agentline.Call{ProjectID: e.project, AgentID: agentID, CallSID: sid,
		Direction: agentline.CallTest, From: "owner@example.com", Status: agentline.CallQueued}, 10); err != nil {
		t.Fatal(err)
	}
	return streamtoken.SignClaims(secret, streamtoken.Claims{AgentID: agentID, Ref: sid, Direction: agentline.CallTest, Expires: expires.Unix(), UserID: 1})
}

// TestAdmitTestCall: a test call's stream, opened by the browser without
// a carrier's signature, is admitted with its own token only, once, for
// its agent, until the token expires; a carrier's stream never takes a
// test call's token. On SQLite and PostgreSQL, since the one use is the
// store's.
func TestAdmitTestCall(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		soon := time.Now().Add(streamtoken.TestTTL)
		start := func(sid, tok string) streamStart {
			return streamStart{StreamSID: "MZ0009", CallSID: sid, CustomParameters: map[string]string{"stream_token": tok, "direction": agentline.CallTest}}
		}
		e := newAdmitEnvOn(t, db)
		ctx := context.Background()

		tok := e.testCall(t, e.ada, testSID, soon)
		if err := e.h.checkTestToken(tok, e.ada); err != nil {
			t.Fatalf("the upgrade check refuses a test call's token: %v", err)
		}
		sc, err := e.h.admitStream(ctx, e.ada, start(testSID, tok), tok)
		if err != nil {
			t.Fatalf("test call refused: %v", err)
		}
		if sc.call.Direction != agentline.CallTest || sc.call.Status != agentline.CallInProgress || sc.claims.UserID != 1 {
			t.Fatalf("admitted %+v %+v", sc.call, sc.claims)
		}
		// A replay of the same token, on this instance or another.
		if _, err := e.h.admitStream(ctx, e.ada, start(testSID, tok), tok); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("replay: %v, want conflict", err)
		}

		refused := func(name string, agentID int64, s streamStart, opened, want string) {
			t.Helper()
			_, err := e.h.admitStream(ctx, agentID, s, opened)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want an error saying %q", name, err, want)
			}
		}
		sid2, sid3, sid4 := "CA00000000000000000000000000000010", "CA00000000000000000000000000000011", "CA00000000000000000000000000000012"
		tok2 := e.testCall(t, e.ada, sid2, soon)
		refused("on a carrier's stream", e.ada, start(sid2, tok2), "", "test call's token on a carrier's stream")
		refused("another agent's stream", e.bob, start(sid2, tok2), tok2, "another agent")
		refused("start token not the opened one", e.ada, start(sid2, tok2), tok, "not the test call token the stream was opened with")
		refused("another call's SID", e.ada, start(sid3, tok2), tok2, "issued for another call")
		expired := e.testCall(t, e.ada, sid3, time.Now().Add(-time.Second))
		refused("expired", e.ada, start(sid3, expired), expired, "expired")
		if err := e.h.checkTestToken(expired, e.ada); !errors.Is(err, streamtoken.ErrInvalid) {
			t.Errorf("the upgrade check takes an expired token: %v", err)
		}
		// A test call's token naming a carrier's call (forged by whoever
		// holds the secret, or a bug) admits nothing.
		e.inbound(t, sid4)
		forged := streamtoken.SignClaims(secret, streamtoken.Claims{AgentID: e.ada, Ref: sid4, Direction: agentline.CallTest, Expires: soon.Unix()})
		refused("a carrier's call", e.ada, start(sid4, forged), forged, "not a test call")
		// A carrier's token cannot open an unsigned stream: the upgrade
		// check takes test calls' tokens only.
		inboundTok := token(e.ada, sid4, agentline.CallInbound, soon)
		if err := e.h.checkTestToken(inboundTok, e.ada); err == nil {
			t.Error("the upgrade check takes an inbound call's token without a signature")
		}
		if err := e.h.checkTestToken(tok2, e.bob); !errors.Is(err, streamtoken.ErrInvalid) {
			t.Errorf("the upgrade check takes another agent's test token: %v", err)
		}
		// The refusals used nothing up: the second call's token still admits.
		if _, err := e.h.admitStream(ctx, e.ada, start(sid2, tok2), tok2); err != nil {
			t.Errorf("the second test call, after refused tries: %v", err)
		}
	})
}

func TestMain(m *testing.M) { storetest.Main(m) }
