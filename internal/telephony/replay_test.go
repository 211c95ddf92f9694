package telephony_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/telephony/callsim"
)

// TestReplayedStreamTokenOpensNoModelSocket: the start message of a live
// call, replayed on a second socket (same token, same call), is refused
// before the model is dialed: a replay costs no model session.
func TestReplayedStreamTokenOpensNoModelSocket(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	sid := e.fake.IncomingCall("+14155550199", e.number)
	doc := e.postForm("/api/telephony/inbound", url.Values{"CallSid": {sid}, "From": {"+14155550199"}, "To": {e.number}}, e.fake.AuthToken())
	s, err := callsim.ParseTwiML(string(doc.body))
	if err != nil {
		t.Fatalf("%v: %s", err, doc.body)
	}
	opts := callsim.Options{Server: e.srv.URL, CallSID: sid, AuthToken: e.fake.AuthToken(), BotHost: botHost}
	first, err := callsim.Open(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := e.model.Next(ctx); err != nil {
		t.Fatal(err)
	}
	replay, err := callsim.Open(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Close()
	select {
	case <-replay.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the replayed stream is still open")
	}
	if replay.CloseStatus() != websocket.StatusPolicyViolation {
		t.Fatalf("replay closed with %v", replay.CloseStatus())
	}
	if n := e.model.Count(); n != 1 {
		t.Fatalf("%d model sockets opened, want 1: the replay reached the model", n)
	}
	select {
	case <-first.Done():
		t.Fatal("the replay ended the first stream")
	default:
	}
}
