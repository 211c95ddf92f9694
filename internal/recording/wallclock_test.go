package recording

import (
	"testing"
	"time"

	"github.com/agentline/agentline/internal/g711"
)

// advance moves the clock on (fakeClock is s3store_test.go's).
func (c *fakeClock) advance(d time.Duration) { c.set(c.Now().Add(d)) }

// When the caller's side stops sending frames (the simulator while its
// caller is silent) the call goes on: agent audio is placed at its wall
// clock time since the stream started, and the recording ends when the
// call ended, not at the last caller frame.
func TestRecordingFollowsTheWallClockWithoutCallerFrames(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	rec := newTestRecorder(t, Options{Start: clock.Now(), Now: clock.Now})
	var c call
	c.callerRun(0, 400, false) // 400 ms of the caller, then no frames
	for _, o := range c.ops {
		rec.Caller(b64(o.mu), o.ts)
	}
	clock.advance(1400 * time.Millisecond)
	answer := tone(3, 4000) // 500 ms, arriving at 1.4 s
	rec.Agent(b64(answer[:2000]))
	rec.Agent(b64(answer[2000:]))
	clock.advance(time.Second)
	rec.End(clock.Now()) // the call ends at 2.4 s
	clock.advance(5 * time.Second)
	rec.Agent(b64(tone(4, 800))) // after the end: ignored
	res := closeRecorder(t, rec)
	w := readResult(t, res)
	if res.Duration != 2400*time.Millisecond || len(w.left) != 2400*8 {
		t.Fatalf("Duration %v, %d samples; want 2.4 s", res.Duration, len(w.left))
	}
	c.right = []seg{{at: 1400 * 8, mu: answer}}
	if d := firstDiff(w.left, expected(c.left, 2400*8)); d != "" {
		t.Errorf("left (caller): %s", d)
	}
	if d := firstDiff(w.right, expected(c.right, 2400*8)); d != "" {
		t.Errorf("right (agent): %s", d)
	}
	if res.Unplayed != 0 || res.AgentBytes != 4000 {
		t.Errorf("Unplayed %v, AgentBytes %d", res.Unplayed, res.AgentBytes)
	}
}

// A barge-in while no caller frames come cuts the agent at its wall clock
// time; without End, Close's time ends the recording.
func TestRecordingClearOnTheWallClock(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	rec := newTestRecorder(t, Options{Start: clock.Now(), Now: clock.Now})
	clock.advance(100 * time.Millisecond)
	answer := tone(5, 8000) // 1 s, queued at 100 ms
	rec.Agent(b64(answer))
	clock.advance(300 * time.Millisecond)
	rec.Clear() // at 400 ms: 300 ms were played
	clock.advance(600 * time.Millisecond)
	res := closeRecorder(t, rec)
	w := readResult(t, res)
	if res.Duration != time.Second {
		t.Fatalf("Duration %v, want 1s", res.Duration)
	}
	want := make([]int16, 8000)
	for i, u := range answer[:2400] {
		want[800+i] = g711.Decode(u)
	}
	if d := firstDiff(w.right, want); d != "" {
		t.Errorf("right (agent): %s", d)
	}
	if len(res.Cuts) != 1 || res.Cuts[0] != (Cut{At: 400 * time.Millisecond, Dropped: 700 * time.Millisecond}) {
		t.Errorf("Cuts %v", res.Cuts)
	}
}
