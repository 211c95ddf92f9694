package cluster_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/ratelimit/redistest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// liveCall is a simulated call in progress: the carrier's side and the
// model's side of it.
type liveCall struct {
	*callsim.Call
	model  *realtimefake.Session
	rounds int
}

// dial places an inbound call to the fixture's number through instance i
// and waits for the model's socket.
func dial(t *testing.T, ctx context.Context, i *instance, f fakes, fx fixture) *liveCall {
	t.Helper()
	c, err := callsim.Inbound(ctx, i.Client, i.URL, "+14155550199", fx.number, signed(callsim.Options{EchoMarks: true}))
	if err != nil {
		t.Fatalf("call through %s: %v", i.name, err)
	}
	t.Cleanup(func() { c.Close() })
	ss, err := f.model.Next(ctx)
	if err != nil {
		t.Fatalf("the model's socket did not open: %v", err)
	}
	return &liveCall{Call: c, model: ss}
}

// exchange proves audio flows both ways: a caller frame reaches the model,
// and a model delta reaches the caller. Each round's audio is distinct.
func (lc *liveCall) exchange(t *testing.T, ctx context.Context) {
	t.Helper()
	lc.rounds++
	frame := bytes.Repeat([]byte{byte(lc.rounds)}, callsim.FrameBytes)
	if err := lc.SendMedia(ctx, frame); err != nil {
		t.Fatalf("round %d: caller audio: %v", lc.rounds, err)
	}
	audio, err := lc.model.WaitAudio(ctx, lc.rounds)
	if err != nil {
		t.Fatalf("round %d: the model got no caller audio: %v", lc.rounds, err)
	}
	if got := audio[lc.rounds-1]; got != base64.StdEncoding.EncodeToString(frame) {
		t.Fatalf("round %d: the model got %q", lc.rounds, got)
	}
	reply := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(0x80 + lc.rounds)}, callsim.FrameBytes))
	if err := lc.model.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_1", "delta": reply}); err != nil {
		t.Fatalf("round %d: model audio: %v", lc.rounds, err)
	}
	if _, err := lc.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "media" && m.Payload == reply }); err != nil {
		t.Fatalf("round %d: the caller got no agent audio: %v", lc.rounds, err)
	}
}

// A call relayed by A keeps flowing both ways while B restarts; B lists it
// while it runs and, after its restart, shows its end.
func TestCallsAcrossInstancesWhileOneRestarts(t *testing.T) {
	t.Parallel() // each test starts its own instances, database and fakes
	dbURL := storetest.URL(t, store.Postgres)
	f := startFakes(t)
	env := f.env(dbURL, redistest.Start(t))
	a, b := start(t, "a", env), start(t, "b", env)
	fx := setup(t, a, dbURL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	lc := dial(t, ctx, a, f, fx)
	lc.exchange(t, ctx)
	var page struct{ Items []agentline.Call }
	b.Must(t, 200, "GET", "/api/projects/"+itoa(fx.project.ID)+"/telephony/calls", fx.token, nil, &page)
	if len(page.Items) != 1 || page.Items[0].CallSID != lc.CallSID || page.Items[0].Status != agentline.CallInProgress {
		t.Fatalf("calls listed on b = %+v, want %s in progress", page.Items, lc.CallSID)
	}

	b.stop(t, 30*time.Second)
	if b.exitErr != nil {
		t.Fatalf("b exited with %v", b.exitErr)
	}
	lc.exchange(t, ctx) // B is down
	b.run(t)
	lc.exchange(t, ctx) // B is back

	if err := lc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	var call agentline.Call
	waitFor(t, 30*time.Second, "the call's end recorded", func() bool {
		b.Must(t, 200, "GET", "/api/calls/"+lc.CallSID, fx.token, nil, &call)
		return call.Status == agentline.CallCompleted
	})
	if call.EndReason == "" || call.DurationS == nil {
		t.Fatalf("call record on b = %+v", call)
	}
	t.Logf("call ended %s after %ds, %d rounds of audio each way", call.EndReason, *call.DurationS, lc.rounds)
	if r := a.Do(t, "GET", "/readyz", "", nil); r.Status != http.StatusOK {
		t.Fatalf("a /readyz = %s", r)
	}
}
