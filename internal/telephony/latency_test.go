package telephony_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/telephony/callsim"
)

// A whole call: the caller speaks (frames paced as a phone line carries
// them), the fake model waits a known delay after speech_stopped before its
// answer's first audio, and the call's record holds that turn's latency.
// The record is held between two bounds that need no timing assumption:
// at least the model's delay (the fake starts waiting only once the relay
// has read every frame), and at most what the caller itself saw from its
// speech's end on the line's clock (start + 300 ms, which no frame beat) to
// the answer's arrival. On a quiet machine the two are a few ms apart; a
// loaded one widens the second, and the record must follow it.
func TestCallRecordsTurnLatency(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	if _, err := ss.WaitType(ctx, "session.update"); err != nil {
		t.Fatal(err)
	}
	const frames, delay = 15, 300 * time.Millisecond
	// Each frame leaves once it has been captured, as a phone line's do:
	// frame i (stamped 20·i ms) at 20·(i+1) ms.
	start := time.Now()
	for i := range frames {
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * 20 * time.Millisecond)))
		if err := c.SendPayload(ctx, base64.StdEncoding.EncodeToString(make([]byte, callsim.FrameBytes))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ss.WaitAudio(ctx, frames); err != nil {
		t.Fatal(err)
	}
	answer := base64.StdEncoding.EncodeToString(frame(1))
	if err := ss.Answer(ctx, frames*20, delay, "item_1", answer); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Payload == answer }); err != nil {
		t.Fatal(err)
	}
	seen := time.Since(start) - frames*20*time.Millisecond
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c, ss)
	events, _ := e.record(c.CallSID)["events"].([]any)
	var got []int64
	for _, ev := range events {
		m, _ := ev.(map[string]any)
		if m["type"] == "turn_latency" {
			var d struct {
				LatencyMS int64 `json:"latency_ms"`
			}
			b, _ := json.Marshal(m["data"])
			json.Unmarshal(b, &d)
			got = append(got, d.LatencyMS)
		}
	}
	t.Logf("model delay %v, caller saw %v, recorded %v ms", delay, seen, got)
	if len(got) != 1 || time.Duration(got[0])*time.Millisecond < delay-time.Millisecond ||
		time.Duration(got[0])*time.Millisecond > seen+time.Millisecond {
		t.Fatalf("recorded turn latencies %v ms, want one between %v and %v (events %v)", got, delay, seen, events)
	}
}
