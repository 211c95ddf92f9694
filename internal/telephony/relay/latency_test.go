package relay_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/telephony/relay"
)

// TestTurnLatencyMatchesTheModelsDelay plays turns whose model waits a
// known delay after speech_stopped before its first audio: the relay's
// recorded latency of each turn is that delay, within 20 ms. The caller's
// frames go out in real time, each stamped (as Twilio does) with its start
// on the stream's clock, so the relay's mapping of audio_end_ms to its own
// clock is what is checked, not the pacing.
func TestTurnLatencyMatchesTheModelsDelay(t *testing.T) {
	r := newRig(t, rigOptions{})
	rng := rand.New(rand.NewPCG(7, 8))
	start := time.Now()
	frames := 0
	for turn, delay := range []time.Duration{300 * time.Millisecond, 200 * time.Millisecond, 450 * time.Millisecond} {
		// 200 ms of speech, paced as it is spoken: each frame is sent
		// once captured, stamped with its start. Between turns the
		// stream's clock runs on with no frames, as after dropped ones.
		base := time.Since(start).Milliseconds()
		for j := range int64(10) {
			time.Sleep(time.Until(start.Add(time.Duration(base+20*(j+1)) * time.Millisecond)))
			r.send(fmt.Sprintf(`{"event":"media","sequenceNumber":"%d","streamSid":"MZ1","media":{"track":"inbound","chunk":"%d","timestamp":"%d","payload":"%s"}}`,
				frames+1, frames, base+20*j, randomFrame(rng)))
			frames++
		}
		if _, err := r.model.WaitAudio(r.ctx, frames); err != nil {
			t.Fatal(err)
		}
		item := fmt.Sprintf("item_%d", turn)
		if err := r.model.Answer(r.ctx, int64(frames*20), delay, item, randomFrame(rng)); err != nil {
			t.Fatal(err)
		}
		if m := r.readCarrier(); m.Event != "media" {
			t.Fatalf("carrier got %s, want the answer's media", m.Event)
		}
		got := r.nextEvent("turn_latency").Latency
		t.Logf("turn %d: model delay %v, recorded %v", turn, delay, got)
		if diff := (got - delay).Abs(); diff > 20*time.Millisecond {
			t.Errorf("turn %d: recorded latency %v, want %v within 20ms", turn, got, delay)
		}
	}
}

// nextEvent returns the next relay event of the type, skipping others.
func (r *rig) nextEvent(typ string) relay.Event {
	r.t.Helper()
	for {
		select {
		case e := <-r.events:
			if e.Type == typ {
				return e
			}
		case <-r.ctx.Done():
			r.t.Fatalf("no %s event", typ)
			return relay.Event{}
		}
	}
}
