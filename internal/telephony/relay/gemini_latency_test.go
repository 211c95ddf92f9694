package relay_test

import (
	"bytes"
	"encoding/base64"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/g711"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
)

// voicedFrame is 20 ms of a loud square wave in mu-law (base64), speech
// for the relay's voice check; silentFrame is 20 ms of silence.
func voicedFrame() string {
	b := make([]byte, 160)
	for i := range b {
		v := int16(6000)
		if (i/10)%2 == 1 {
			v = -6000
		}
		b[i] = g711.Encode(v)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func silentFrame() string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xFF}, 160)) }

// On a Gemini call a turn's latency runs from the end of the caller's last
// voiced frame (on the carrier's clock) to the answer's first audio: the
// caller speaks 200 ms then is silent 300 ms, the model answers 100 ms
// after the last frame reached it, so the latency is at least 400 ms. A
// model turn with no speech before it (the greeting, a second turn
// without the caller) records none.
func TestGeminiTurnLatencyFromTheCallersLastVoicedFrame(t *testing.T) {
	g := newGeminiRig(t, nil)
	ctx := g.ctx
	// The greeting, before the caller said a word.
	g.live.SendAudio(ctx, geminilivefake.Tone(100*time.Millisecond))
	g.media(800)
	g.live.SendTurnComplete(ctx)

	voiced, silent := voicedFrame(), silentFrame()
	for i := range 25 {
		p := silent
		if i < 10 {
			p = voiced
		}
		g.sendFrame(i, p)
	}
	if err := g.live.WaitAudioBytes(ctx, 25*320); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the model's time
	g.live.SendAudio(ctx, geminilivefake.Tone(100*time.Millisecond))
	g.media(800)
	got := g.nextEvent("turn_latency").Latency
	t.Logf("caller silent 300 ms, model 100 ms: recorded %v", got)
	if got < 400*time.Millisecond {
		t.Errorf("recorded %v, want at least the 300 ms of silence and the model's 100 ms", got)
	}
	g.live.SendTurnComplete(ctx)

	// The caller stays silent; the model speaks again: nothing measured.
	for i := 25; i < 35; i++ {
		g.sendFrame(i, silent)
	}
	if err := g.live.WaitAudioBytes(ctx, 35*320); err != nil {
		t.Fatal(err)
	}
	g.live.SendAudio(ctx, geminilivefake.Tone(100*time.Millisecond))
	g.media(800)
	g.live.SendTurnComplete(ctx)
	g.send(`{"event":"stop","sequenceNumber":"200","streamSid":"MZ1"}`)
	g.waitResult()
	for len(g.events) > 0 {
		if e := <-g.events; e.Type == "turn_latency" {
			t.Errorf("a turn with no caller speech before it recorded %v", e.Latency)
		}
	}
}
