package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/ratelimit/redistest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// TestStreamTokenReplayedOnAnotherInstance: the start message of a call
// relayed by A, replayed to B (same stream token, same call), is refused by
// B before it dials the model: a token's one use holds across instances
// through the database, not per process.
func TestStreamTokenReplayedOnAnotherInstance(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t, store.Postgres)
	f := startFakes(t)
	env := f.env(dbURL, redistest.Start(t))
	a, b := start(t, "a", env), start(t, "b", env)
	fx := setup(t, a, dbURL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const sid = "CA0123456789abcdef0123456789abcdef"
	doc, err := callsim.Webhook(ctx, a.Client, a.URL, sid, "+14155550199", fx.number, signed(callsim.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := callsim.ParseTwiML(doc)
	if err != nil {
		t.Fatal(err)
	}
	first, err := callsim.Open(ctx, stream, signed(callsim.Options{Server: a.URL, CallSID: sid, EchoMarks: true}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	lc := &liveCall{Call: first}
	if lc.model, err = f.model.Next(ctx); err != nil {
		t.Fatalf("the model's socket did not open: %v", err)
	}
	lc.exchange(t, ctx)

	replay, err := callsim.Open(ctx, stream, signed(callsim.Options{Server: b.URL, CallSID: sid}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replay.Close() })
	reached := make(chan struct{})
	go func() {
		if _, err := f.model.Next(ctx); err == nil {
			close(reached)
		}
	}()
	select {
	case <-replay.Done():
	case <-reached:
		t.Fatal("the replay on b reached the model")
	case <-ctx.Done():
		t.Fatal("the replayed stream on b is still open")
	}
	if replay.CloseStatus() != websocket.StatusPolicyViolation {
		t.Fatalf("replay on b closed with %v", replay.CloseStatus())
	}
	if n := f.model.Count(); n != 1 {
		t.Fatalf("%d model sockets opened, want 1: the replay on b reached the model", n)
	}
	lc.exchange(t, ctx) // the call on a goes on
}
