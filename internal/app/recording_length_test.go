package app_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// A recording covers the whole call, both sides, even when the caller
// sends frames for only part of it (the simulator stops while its caller is
// silent; a stalled line does too): the caller speaks 400 ms, then sends
// nothing; the agent answers a second later and the caller hangs up a
// second after that. The stored WAV lasts as long as the call (its
// started_at to ended_at) within 20 ms, and holds the agent's answer about
// where it was played.
func TestRecordingCoversTheWholeCall(t *testing.T) {
	t.Parallel()
	model := realtimefake.New("sk-test")
	defer model.Close()
	s := apptest.StartFresh(t, store.SQLite, phoneEnv(model.URL(), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tok := s.Login(t, "owner@example.com", "owner-password")
	phoneProject(ctx, t, s)
	rng := rand.New(rand.NewPCG(21, 22))
	caller, agent := audible(rng, 3200), audible(rng, 4000) // 400 ms and 500 ms

	c, err := callsim.Inbound(ctx, http.DefaultClient, s.URL, "+14155550199", "+14155550100",
		callsim.Options{EchoMarks: true, AuthToken: carrierToken, BotHost: "bot.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ss, err := model.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Play(ctx, caller, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitAudio(ctx, len(caller)/callsim.FrameBytes); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the caller is silent and sends nothing
	answered := time.Now()
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "response_id": "resp_1", "item_id": "item_1",
		"delta": base64.StdEncoding.EncodeToString(agent)})
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "media" }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	c.Stop(ctx)
	<-c.Done()

	call, err := s.App.Store.Call(ctx, projectOfNumber(ctx, t, s, "+14155550100"), c.CallSID)
	if err != nil {
		t.Fatal(err)
	}
	conv := waitRecording(t, s, tok, agentline.CallConversationID(call.ID))
	if conv.EndedAt == nil {
		t.Fatalf("the call has no end: %+v", conv)
	}
	callDur := conv.EndedAt.Sub(conv.StartedAt)
	recDur := time.Duration(conv.Recording.DurationMS) * time.Millisecond
	if d := recDur - callDur; d < -20*time.Millisecond || d > 20*time.Millisecond {
		t.Fatalf("the recording lasts %v, the call %v (from %v to %v)", recDur, callDur, conv.StartedAt, *conv.EndedAt)
	}
	wav := s.Must(t, 200, "GET", "/api/conversations/"+conv.ID+"/recording", tok, nil, nil).Body
	data := wav[44:]
	if ms := int64(len(data) / 4 / 8); ms < conv.Recording.DurationMS-1 || ms > conv.Recording.DurationMS+1 {
		t.Fatalf("the WAV holds %d ms, its row says %d", ms, conv.Recording.DurationMS)
	}
	first := [2]int{-1, -1}
	heard := [2]int{}
	for i := 0; i+4 <= len(data); i += 4 {
		for ch := range 2 {
			if binary.LittleEndian.Uint16(data[i+2*ch:]) != 0 {
				heard[ch]++
				if first[ch] < 0 {
					first[ch] = i / 4
				}
			}
		}
	}
	if heard[0] != len(caller) || first[0] != 0 {
		t.Errorf("caller: %d samples from %d, want %d from 0", heard[0], first[0], len(caller))
	}
	if heard[1] != len(agent) {
		t.Errorf("agent: %d samples in the recording, want %d", heard[1], len(agent))
	}
	// The answer plays when it arrives, on the call's clock: about a
	// second and a half after the stream started.
	want := answered.Sub(conv.StartedAt)
	if at := time.Duration(first[1]) * time.Second / 8000; at < want-50*time.Millisecond || at > want+250*time.Millisecond {
		t.Errorf("the agent starts at %v of the recording; it was sent at %v of the call", at, want)
	}
}
