package telephony

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// TestStartTestCallOperation: what startTestCall checks before it records
// a test call, and what it records and mints.
func TestStartTestCallOperation(t *testing.T) {
	t.Parallel()
	user := agentline.User{ID: 7, Email: "owner@example.com"}
	cases := []struct {
		name    string
		change  func(*Options)
		arrange func(t *testing.T, e *opsEnv)
		agent   func(e *opsEnv) int64
		code    string
	}{
		{name: "recorded"},
		{name: "draining", arrange: func(t *testing.T, e *opsEnv) { e.h.Drain() }, code: agentline.EUnavailable},
		{name: "a Gemini agent without GEMINI_API_KEY", agent: func(e *opsEnv) int64 { return e.gem }, code: agentline.ENotConfigured},
		{name: "no model key", change: func(o *Options) { o.OpenAIAPIKey = "" }, code: agentline.ENotConfigured},
		{name: "the project's live calls at the cap", change: func(o *Options) { o.MaxConcurrentCalls = 1 }, arrange: func(t *testing.T, e *opsEnv) {
			if _, err := e.h.startTestCall(context.Background(), e.project, e.ada, 0, user); err != nil {
				t.Fatal(err)
			}
		}, code: agentline.ERateLimited},
		{name: "another project's agent", agent: func(e *opsEnv) int64 { return e.eve }, code: agentline.ENotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newOpsEnv(t, func(o *Options) {
				o.OpenAIAPIKey = "sk-test"
				if tc.change != nil {
					tc.change(o)
				}
			})
			if tc.arrange != nil {
				tc.arrange(t, e)
			}
			agentID := e.ada
			if tc.agent != nil {
				agentID = tc.agent(e)
			}
			got, err := e.h.startTestCall(context.Background(), e.project, agentID, 0, user)
			wantCode(t, err, tc.code)
			if tc.code != "" {
				return
			}
			call, err := e.db.Call(context.Background(), e.project, got.CallSID)
			if err != nil || call.Direction != agentline.CallTest || call.Status != agentline.CallQueued || call.From != user.Email ||
				call.NumberID != nil || agentline.CallConversationID(call.ID) != got.ConversationID {
				t.Fatalf("record %+v, %v for %+v", call, err, got)
			}
			claims, err := streamtoken.Verify("s3cret", got.Token, e.ada, time.Now())
			if err != nil || claims != (streamtoken.Claims{AgentID: e.ada, Ref: got.CallSID, Direction: agentline.CallTest, Expires: got.ExpiresAt.Unix(), UserID: user.ID}) {
				t.Fatalf("claims %+v, %v", claims, err)
			}
			if want := "/api/telephony/stream/" + strconv.FormatInt(e.ada, 10) + "?test_token=" + got.Token; got.StreamURL != want {
				t.Errorf("stream_url %q, want %q", got.StreamURL, want)
			}
		})
	}
}

// A test call whose stream never came is ended as canceled,
// never_connected, once its timer fires; one whose stream came is left to
// its relay.
func TestAbandonUnusedTestCall(t *testing.T) {
	t.Parallel()
	e := newOpsEnv(t, func(o *Options) { o.OpenAIAPIKey = "sk-test" })
	ctx := context.Background()
	user := agentline.User{ID: 7, Email: "owner@example.com"}
	unused, err := e.h.startTestCall(ctx, e.project, e.ada, 0, user)
	if err != nil {
		t.Fatal(err)
	}
	live, err := e.h.startTestCall(ctx, e.project, e.ada, 0, user)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: live.CallSID, Status: agentline.CallInProgress}, conversation.CallChanged); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.h.endUnused(e.project, live.CallSID, log)
	if c, err := e.db.Call(ctx, e.project, live.CallSID); err != nil || c.Status != agentline.CallInProgress {
		t.Fatalf("the live call: %+v, %v", c, err)
	}
	e.h.abandonUnused(e.project, unused.CallSID, 0, log)
	var c agentline.Call
	for range 400 { // bounded: the timers fire at once
		if c, err = e.db.Call(ctx, e.project, unused.CallSID); err != nil || c.Status != agentline.CallQueued {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil || c.Status != agentline.CallCanceled || c.EndReason != neverConnected {
		t.Fatalf("the unused call: %+v, %v", c, err)
	}
}
