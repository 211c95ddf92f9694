package relay_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/agentline/agentline/internal/telephony/relay"
)

// logRecorder notes what the relay hands a call's recorder, in order.
type logRecorder struct {
	mu  sync.Mutex
	log []string
}

func (l *logRecorder) add(s string) {
	l.mu.Lock()
	l.log = append(l.log, s)
	l.mu.Unlock()
}

func (l *logRecorder) Caller(p []byte, ts int64) { l.add(fmt.Sprintf("caller %d %s", ts, p)) }
func (l *logRecorder) Agent(p []byte)            { l.add("agent " + string(p)) }
func (l *logRecorder) Clear()                    { l.add("clear") }

func (l *logRecorder) entries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log...)
}

// The recorder gets every caller frame with its media timestamp (the held
// ones before session.updated too), every agent delta as it goes to the
// carrier, and a clear when a barge-in drops agent audio; it gets copies of
// exactly the bytes relayed.
func TestRecorderGetsBothSidesAndBargeIns(t *testing.T) {
	rec := &logRecorder{}
	r := newRig(t, rigOptions{recorder: rec})
	rng := rand.New(rand.NewPCG(7, 8))
	var want []string
	for i := range 3 {
		p := randomFrame(rng)
		r.sendFrame(i, p)
		want = append(want, fmt.Sprintf("caller %d %s", i*20, p))
	}
	if _, err := r.model.WaitAudio(r.ctx, 3); err != nil {
		t.Fatal(err)
	}
	d := delta("item_a", 100, rng)
	r.modelSend(d)
	want = append(want, "agent "+d["delta"].(string))
	for m := r.readCarrier(); m.Event != "media"; m = r.readCarrier() {
	}
	r.modelSend(map[string]any{"type": "input_audio_buffer.speech_started", "item_id": "item_user"})
	for m := r.readCarrier(); m.Event != "clear"; m = r.readCarrier() {
	}
	want = append(want, "clear")
	r.send(`{"event":"media","sequenceNumber":"9","streamSid":"MZ1","media":{"track":"inbound","chunk":"8","payload":"AAAA"}}`)
	want = append(want, "caller -1 AAAA") // no timestamp
	r.send(`{"event":"stop","sequenceNumber":"10","streamSid":"MZ1","stop":{}}`)
	r.waitResult()
	got := rec.entries()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("recorder got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var _ relay.Recorder = (*logRecorder)(nil)
