package recording

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/g711"
)

// stuckWriter returns a batch hook that holds the writer before it takes
// its first batch until release is called: the slowest possible disk,
// without any timing.
func stuckWriter() (hook func(), release func()) {
	gate := make(chan struct{})
	var once sync.Once
	return func() { <-gate }, func() { once.Do(func() { close(gate) }) }
}

// TestRecorderFallsBehind: with the writer stuck, a whole call's worth of
// Caller and Agent calls still returns (the loop ends: nothing waited for
// the writer); what did not fit is counted and recorded as silence in its
// place, and the file stays well-formed.
func TestRecorderFallsBehind(t *testing.T) {
	hook, release := stuckWriter()
	defer release()
	rec := newTestRecorder(t, Options{BufferBytes: 2048, batchHook: hook})
	const frames = 500
	var agentSent int64
	for i := range int64(frames) {
		rec.Caller(b64(tone(int(i), 160)), i*20)
		if i%10 == 5 {
			rec.Agent(b64(tone(1000+int(i), 320)))
			agentSent += 320
		}
		if i%100 == 99 {
			rec.Clear()
		}
	}
	release()
	res := closeRecorder(t, rec)
	w := readResult(t, res)

	if res.DroppedCallerFrames == 0 || res.DroppedCallerFrames+res.CallerFrames != frames {
		t.Errorf("caller frames: %d recorded, %d dropped; want some dropped, %d in all", res.CallerFrames, res.DroppedCallerFrames, frames)
	}
	if res.DroppedAgentBytes == 0 || res.DroppedAgentBytes+res.AgentBytes != agentSent {
		t.Errorf("agent bytes: %d recorded, %d dropped; want %d in all", res.AgentBytes, res.DroppedAgentBytes, agentSent)
	}
	if res.Gaps != 2 || res.Lost != 0 { // one run of drops per side
		t.Errorf("Gaps %d Lost %d, want 2, 0", res.Gaps, res.Lost)
	}
	// The line time went on through the drops: the file is the whole call,
	// the recorded frames sit at their timestamps and the rest is silence.
	if len(w.left) != frames*160 || res.Duration != frames*20*time.Millisecond {
		t.Fatalf("%d samples, %v", len(w.left), res.Duration)
	}
	for i := range frames {
		got := w.left[i*160 : (i+1)*160]
		recorded := int64(i) < res.CallerFrames // the first ones fitted the buffer
		for k, u := range tone(i, 160) {
			if want := g711.Decode(u); recorded && got[k] != want || !recorded && got[k] != 0 {
				t.Fatalf("frame %d (recorded %v) sample %d = %d", i, recorded, k, got[k])
			}
		}
	}
}

// TestCloseGivesUp: Close returns when its context ends even if the writer
// is stuck, and the abandoned file is removed once the writer moves.
func TestCloseGivesUp(t *testing.T) {
	hook, release := stuckWriter()
	dir := t.TempDir()
	rec := newTestRecorder(t, Options{Dir: dir, batchHook: hook})
	rec.Caller(b64(tone(1, 160)), 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rec.Close(ctx); err == nil {
		t.Fatal("Close with an ended context and a stuck writer succeeded")
	}
	rec.Caller(b64(tone(2, 160)), 20) // after Close: ignored
	rec.Agent(b64(tone(3, 160)))
	rec.Clear()
	release()
	<-rec.done
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
