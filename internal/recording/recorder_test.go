package recording

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/g711"
)

// op is one call the relay makes.
type op struct {
	kind kind
	ts   int64  // caller: media.timestamp
	mu   []byte // the audio, sent base64-encoded
	raw  []byte // sent as is instead (not base64)
}

// seg is audio expected at a sample position. idleMs >= 0 marks agent audio
// that started on an idle line after arriving at that line time (ms): it
// must start within one frame (20 ms) of it.
type seg struct {
	at     int64
	mu     []byte
	idleMs int64
}

// call is a scenario and what its recording must hold.
type call struct {
	ops         []op
	left, right []seg
	length      int64 // samples
	opts        Options
	check       func(t *testing.T, res Result)
}

func (c *call) caller(ts int64, seed int) {
	mu := tone(seed, 160)
	c.ops = append(c.ops, op{kind: kindCaller, ts: ts, mu: mu})
	c.left = append(c.left, seg{at: ts * 8, mu: mu})
}

// callerRun sends 20 ms frames from ms from up to (not including) to; jitter
// moves every third timestamp 1 ms later or earlier, so frames overlap.
func (c *call) callerRun(from, to int64, jitter bool) {
	for ts := from; ts < to; ts += 20 {
		j := int64(0)
		if jitter {
			j = []int64{0, 1, -1}[(ts/20)%3]
		}
		c.caller(max(0, ts+j), int(ts))
	}
}

// agent sends deltas that the carrier will play from at (samples) onwards.
func (c *call) agent(at, idleMs int64, deltas ...[]byte) {
	for i, mu := range deltas {
		c.ops = append(c.ops, op{kind: kindAgent, mu: mu})
		s := seg{at: at, mu: mu, idleMs: -1}
		if i == 0 {
			s.idleMs = idleMs
		}
		c.right = append(c.right, s)
		at += int64(len(mu))
	}
}

// expected lays segments over silence in order: later ones overwrite.
func expected(segs []seg, length int64) []int16 {
	out := make([]int16, length)
	for _, s := range segs {
		for i, u := range s.mu {
			if s.at+int64(i) < length {
				out[s.at+int64(i)] = g711.Decode(u)
			}
		}
	}
	return out
}

func run(t *testing.T, c call) (wavFile, Result) {
	t.Helper()
	rec := newTestRecorder(t, c.opts)
	for _, o := range c.ops {
		p := o.raw
		if p == nil {
			p = b64(o.mu)
		}
		switch o.kind {
		case kindCaller:
			rec.Caller(p, o.ts)
		case kindAgent:
			rec.Agent(p)
		case kindClear:
			rec.Clear()
		}
		clear(p) // the relay reuses its buffers: the recorder must have copied
	}
	res := closeRecorder(t, rec)
	return readResult(t, res), res
}

func TestRecorderCalls(t *testing.T) {
	cases := map[string]func() call{
		"gap, jitter, burst, clear":       syntheticCall,
		"agent speaks first":              agentFirstCall,
		"hang-up with agent audio queued": hangUpCall,
		"long pause and a late frame":     latePauseCall,
		"refused input":                   refusedCall,
		"JSON-escaped slashes":            escapedCall,
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			c := build()
			w, res := run(t, c)
			if d := firstDiff(w.left, expected(c.left, c.length)); d != "" {
				t.Errorf("left (caller): %s", d)
			}
			if d := firstDiff(w.right, expected(c.right, c.length)); d != "" {
				t.Errorf("right (agent): %s", d)
			}
			if got := res.Duration; got != time.Duration(c.length)*time.Second/8000 {
				t.Errorf("Duration = %v", got)
			}
			for _, s := range c.right {
				if s.idleMs >= 0 && (s.at < s.idleMs*8 || s.at-s.idleMs*8 > 160) {
					t.Errorf("agent audio arriving at %d ms starts at %d ms: not within 20 ms", s.idleMs, s.at/8)
				}
			}
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}

// syntheticCall: a caller talking with timestamp jitter and a silent gap;
// an agent answering in bursts faster than real time; a barge-in that cuts
// the agent mid-delta; two more answers, one after the line went idle.
func syntheticCall() call {
	var c call
	c.callerRun(0, 140, true) // the frame at 120 ms ends the line time at 140 ms
	// 4 deltas of 50 ms arrive at once at 140 ms and queue: 1120..2720.
	d := [][]byte{tone(101, 400), tone(102, 400), tone(103, 400), tone(104, 400)}
	c.agent(1120, 140, d...)
	c.callerRun(140, 260, true) // line time 260 ms = sample 2080
	c.ops = append(c.ops, op{kind: kindClear})
	c.right = c.right[:2]
	c.right = append(c.right, seg{at: 1920, mu: d[2][:160], idleMs: -1}) // cut 160 samples into the third
	c.callerRun(260, 600, true)
	// caller silent 600..1000 ms
	c.callerRun(1000, 1220, false)
	c.agent(1220*8, 1220, tone(105, 800), tone(106, 800)) // line idle: plays at once
	c.callerRun(1220, 2020, false)
	c.agent(2020*8, 2020, tone(107, 800), tone(108, 800), tone(109, 800))
	c.callerRun(2020, 3000, false)
	c.length = 3000 * 8
	c.check = func(t *testing.T, res Result) {
		want := []Cut{{At: 260 * time.Millisecond, Dropped: 80 * time.Millisecond}}
		if !slices.Equal(res.Cuts, want) || res.ClearCuts != 1 {
			t.Errorf("Cuts = %v (%d), want %v", res.Cuts, res.ClearCuts, want)
		}
		if res.CallerFrames != 130 || res.AgentBytes != 4*400+5*800 || res.Unplayed != 0 {
			t.Errorf("CallerFrames %d AgentBytes %d Unplayed %v", res.CallerFrames, res.AgentBytes, res.Unplayed)
		}
		if res.DroppedCallerFrames+res.DroppedAgentBytes+res.Gaps+res.Lost+res.Rejected+res.LateSamples != 0 {
			t.Errorf("losses in a call the writer kept up with: %+v", res)
		}
	}
	return c
}

// TestClearIsVisible checks the cut itself: full agent audio right up to
// the line time of the clear, silence from there on.
func TestClearIsVisible(t *testing.T) {
	c := syntheticCall()
	w, _ := run(t, c)
	const cut = 2080
	if w.right[cut-1] == 0 || w.right[cut] != 0 || slices.ContainsFunc(w.right[cut:1220*8], func(s int16) bool { return s != 0 }) {
		t.Errorf("agent channel around the clear at sample %d: %v | %v", cut, w.right[cut-3:cut], w.right[cut:cut+3])
	}
}

func agentFirstCall() call {
	var c call
	c.agent(0, 0, tone(1, 1600))
	c.callerRun(0, 1000, false)
	c.length = 8000
	return c
}

func hangUpCall() call {
	var c call
	c.callerRun(0, 300, false)
	c.agent(2400, 300, tone(1, 2400)) // arrives at 300 ms, 300 ms long
	c.callerRun(300, 400, false)
	c.right[0].mu = c.right[0].mu[:800] // 2400..3200 played, then the call ends
	c.length = 3200
	c.check = func(t *testing.T, res Result) {
		if res.Unplayed != 200*time.Millisecond {
			t.Errorf("Unplayed = %v, want 200ms", res.Unplayed)
		}
	}
	return c
}

func latePauseCall() call {
	var c call
	c.callerRun(0, 400, false)
	c.callerRun(5000, 5400, false)
	c.ops = append(c.ops, op{kind: kindCaller, ts: 100, mu: tone(99, 160)}) // its place is written
	c.callerRun(5400, 5600, false)
	c.length = 5600 * 8
	c.check = func(t *testing.T, res Result) {
		if res.LateSamples != 160 || res.CallerFrames != 50 {
			t.Errorf("LateSamples %d, CallerFrames %d; want 160, 50", res.LateSamples, res.CallerFrames)
		}
	}
	return c
}

func refusedCall() call {
	c := call{opts: Options{MaxDuration: time.Second}}
	c.callerRun(0, 100, false)
	c.ops = append(c.ops,
		op{kind: kindCaller, ts: 40, raw: []byte("!!!!")},   // not base64: left as it was
		op{kind: kindCaller, ts: -20, mu: tone(7, 160)},     // before the stream
		op{kind: kindCaller, ts: 990, mu: tone(8, 160)},     // ends past MaxDuration
		op{kind: kindCaller, ts: 1 << 61, mu: tone(8, 160)}, // would wrap around in samples
		op{kind: kindAgent, raw: []byte("@@@@@@@@")},        // 6 samples the carrier plays as noise
	)
	c.agent(800+6, -1, tone(9, 160))
	c.callerRun(120, 200, false)
	c.length = 1600
	c.check = func(t *testing.T, res Result) {
		if res.Rejected != 5 {
			t.Errorf("Rejected = %d, want 5", res.Rejected)
		}
	}
	return c
}

// escapedCall: payloads as a JSON encoder that escapes '/' wrote them.
func escapedCall() call {
	var c call
	c.callerRun(0, 200, false)
	c.agent(1600, 200, tone(5, 800))
	c.callerRun(200, 400, false)
	slashes := 0
	for i := range c.ops {
		o := &c.ops[i]
		o.raw = bytes.ReplaceAll(b64(o.mu), []byte("/"), []byte(`\/`))
		slashes += bytes.Count(o.raw, []byte(`\/`))
	}
	c.length = 3200
	c.check = func(t *testing.T, res Result) {
		if slashes == 0 || res.Rejected != 0 {
			t.Errorf("%d escaped slashes, %d payloads rejected", slashes, res.Rejected)
		}
	}
	return c
}
