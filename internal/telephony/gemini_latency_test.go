package telephony_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/g711"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// A Gemini-kind agent's call stores its turn latencies as an OpenAI-kind
// agent's does: two turns in which the caller speaks 200 ms then is
// silent 200 ms before the model answers give two latencies, each at least
// those 200 ms of silence, summarized on the conversation (p50, p95, max)
// and put on the agent lines that answered.
func TestGeminiCallStoresTurnLatency(t *testing.T) {
	t.Parallel()
	e := newGeminiPhone(t)
	ctx := testCtx(t)
	sid := e.fake.IncomingCall("+14155550199", e.number)
	c, err := callsim.Inbound(ctx, http.DefaultClient, e.srv.URL, "+14155550199", e.number, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, CallSID: sid})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ss, err := e.live.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitKind(ctx, "setup"); err != nil {
		t.Fatal(err)
	}
	voiced := make([]byte, callsim.FrameBytes)
	for i := range voiced {
		voiced[i] = g711.Encode(int16(6000 - 12000*((i/10)%2)))
	}
	silent := bytes.Repeat([]byte{0xFF}, callsim.FrameBytes)
	sent, seen := 0, 0
	for turn, answer := range []string{"We open at nine.", "Until six."} {
		for i := range 20 {
			f := silent
			if i < 10 {
				f = voiced
			}
			if err := c.SendMedia(ctx, f); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		if err := ss.WaitAudioBytes(ctx, int64(sent*320)); err != nil {
			t.Fatal(err)
		}
		ss.SendInputTranscription(ctx, "When do you open?")
		ss.SendOutputTranscription(ctx, answer)
		ss.SendAudio(ctx, geminilivefake.Tone(100*time.Millisecond))
		_, seen = geminiMedia(ctx, t, c, seen, 800)
		ss.SendTurnComplete(ctx)
		t.Logf("turn %d answered", turn)
	}
	time.Sleep(50 * time.Millisecond) // the call log writer takes the lines
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	conv := e.conversationOf(c.CallSID)
	l := conv.Latency
	if l == nil || l.Turns != 2 || l.P50MS < 200 || l.P95MS < l.P50MS || l.MaxMS != l.P95MS {
		t.Fatalf("latency %+v, want two turns of at least 200 ms", l)
	}
	t.Logf("turn latency p50 %d ms, p95 %d ms, max %d ms", l.P50MS, l.P95MS, l.MaxMS)
	var answered int
	for _, line := range conv.Transcript {
		if line.Speaker == "agent" && line.LatencyMS != nil {
			answered++
		}
	}
	if answered != 2 {
		t.Fatalf("agent lines with a latency: %d, want 2 (transcript %+v)", answered, conv.Transcript)
	}
}

// conversationOf reads the conversation of the call with the carrier's sid,
// once the call has ended.
func (e *geminiPhone) conversationOf(sid string) agentline.Conversation {
	e.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		call, err := e.app.Store.Call(ctx, e.project, sid)
		if err == nil && call.Status == "completed" {
			conv, err := e.app.Store.Conversation(ctx, e.project, agentline.CallConversationID(call.ID))
			if err != nil {
				e.t.Fatal(err)
			}
			return conv
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("call %s did not end: %+v, %v", sid, call, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
