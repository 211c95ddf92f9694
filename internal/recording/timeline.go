package recording

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"time"

	"github.com/agentline/agentline/internal/g711"
)

const (
	// window is how far behind the line time a caller frame may still land
	// (jitter, reordering); older samples are final and written out.
	window = SampleRate
	// flushChunk is the least written at a time, so that the in-memory part
	// is not shifted for every frame.
	flushChunk = SampleRate / 5
	// chunkFrames bounds the frames interleaved at a time (16 KiB).
	chunkFrames = 4096
	// writeBytes is how much is gathered before a write: about a second.
	writeBytes = 32 << 10
	// maxCuts bounds Result.Cuts; ClearCuts counts them all.
	maxCuts = 1024
)

// timeline places the decoded audio of both sides on the line's time and
// writes it out once no later event can change it. Only the writer
// goroutine uses it.
//
// Positions are in samples since the stream started. Everything before base
// is in the file; left and right hold base onwards: the caller's recent
// frames (up to window behind the line time) and the agent audio queued at
// the carrier, which may reach far beyond the line time until a clear drops
// it.
type timeline struct {
	f           *os.File
	base        int64
	left, right []int16
	clock       int64 // line time: the end of the latest caller frame
	agentEnd    int64 // where the agent audio queued at the carrier ends
	maxSamp     int64
	scratch     []byte // decoded payload
	unescaped   []byte // a payload with JSON escapes removed
	out         []byte // interleaved samples for one write
	err         error  // the first write error; later writes are skipped
	res         Result
}

func newTimeline(f *os.File, maxSamp int64) (*timeline, error) {
	t := &timeline{f: f, maxSamp: maxSamp, out: make([]byte, 0, writeBytes+chunkFrames*4)}
	if _, err := f.Write(wavHeader(0)); err != nil {
		return nil, fmt.Errorf("write recording header: %w", err)
	}
	return t, nil
}

func (t *timeline) apply(b *batch) {
	for _, ev := range b.events {
		switch ev.kind {
		case kindCaller:
			t.caller(ev, b.payload(ev))
		case kindAgent:
			t.agent(ev, b.payload(ev))
		case kindGap:
			t.gap(ev.at, ev.n)
		case kindClear:
			t.clear(ev.at)
		}
	}
	if t.clock-window-t.base >= flushChunk {
		t.flushTo(t.clock - window)
	}
}

// decode decodes base64 into the reused scratch buffer; ok is false for
// input that is not standard base64.
func (t *timeline) decode(b64 []byte) ([]byte, bool) {
	need := base64.StdEncoding.DecodedLen(len(b64))
	if cap(t.scratch) < need {
		t.scratch = make([]byte, need)
	}
	n, err := base64.StdEncoding.Decode(t.scratch[:need], b64)
	if err != nil && bytes.Contains(b64, []byte(escapedSlash)) {
		// The relay passes JSON string bytes as they are, and a JSON encoder
		// may write '/' as "\/".
		t.unescaped = append(t.unescaped[:0], b64...)
		t.unescaped = bytes.ReplaceAll(t.unescaped, []byte(escapedSlash), []byte("/"))
		n, err = base64.StdEncoding.Decode(t.scratch[:need], t.unescaped)
	}
	if err != nil {
		t.res.Rejected++
		return nil, false
	}
	return t.scratch[:n], true
}

const escapedSlash = `\/`

// caller places a frame at its timestamp: a frame that overlaps the one
// before it (timestamp jitter) overwrites the overlap, so that every frame
// starts exactly where the carrier says it does.
func (t *timeline) caller(ev event, payload []byte) {
	t.clock = max(t.clock, ev.at+ev.n)
	mu, ok := t.decode(payload)
	if !ok {
		return
	}
	pos := ev.at
	if pos < t.base { // later than the window: its start is already written
		skip := min(t.base-pos, int64(len(mu)))
		t.res.LateSamples += skip
		mu, pos = mu[skip:], pos+skip
	}
	mu = mu[:min(int64(len(mu)), max(0, t.maxSamp-pos))]
	if len(mu) == 0 {
		return
	}
	if pos-window-t.base > window { // a long pause: write it before it fills memory
		t.flushTo(pos - window)
	}
	t.left = place(t.left, pos-t.base, mu)
	t.res.CallerFrames++
}

// agent queues audio the way the carrier plays it: after the agent audio
// still queued, or at its arrival when the line is idle.
func (t *timeline) agent(ev event, payload []byte) {
	mu, ok := t.decode(payload)
	if !ok {
		t.gap(ev.at, ev.n) // the carrier would have played something that long
		return
	}
	start := max(t.agentEnd, ev.at, t.base)
	if over := start + int64(len(mu)) - t.maxSamp; over > 0 {
		t.res.Rejected++
		mu = mu[:max(0, int64(len(mu))-over)]
	}
	t.right = place(t.right, start-t.base, mu)
	t.agentEnd = start + int64(len(mu))
	t.res.AgentBytes += int64(len(mu))
}

// gap holds the place of agent audio the writer never got, as silence.
func (t *timeline) gap(at, n int64) {
	start := max(t.agentEnd, at, t.base)
	t.agentEnd = min(start+n, t.maxSamp)
}

// clear cuts the agent audio not played by the line time at: the agent
// channel stops there.
func (t *timeline) clear(at int64) {
	at = max(at, t.base)
	if t.agentEnd <= at {
		return
	}
	if keep := at - t.base; int64(len(t.right)) > keep {
		t.right = t.right[:keep]
	}
	t.res.ClearCuts++
	if len(t.res.Cuts) < maxCuts {
		t.res.Cuts = append(t.res.Cuts, Cut{At: samplesToDuration(at), Dropped: samplesToDuration(t.agentEnd - at)})
	}
	t.agentEnd = at
}

// place decodes mu-law into dst from index i, growing dst with silence.
func place(dst []int16, i int64, mu []byte) []int16 {
	if need := i + int64(len(mu)); int64(len(dst)) < need {
		dst = append(dst, make([]int16, need-int64(len(dst)))...)
	}
	for k, u := range mu {
		dst[i+int64(k)] = g711.Decode(u)
	}
	return dst
}

// flushTo writes the samples before to, silence where a side has none.
// The bytes gather in out and go to the file about once a second
// (writeBytes): a write syscall for every 200 ms was a third of a
// recording's CPU (BenchmarkPacedCalls' profile).
func (t *timeline) flushTo(to int64) {
	for t.base < to {
		n := min(to-t.base, chunkFrames)
		for i := range n {
			t.out = appendFrame(t.out, at(t.left, i), at(t.right, i))
		}
		if len(t.out) >= writeBytes {
			t.writeOut()
		}
		t.left, t.right = shift(t.left, n), shift(t.right, n)
		t.base += n
	}
}

// writeOut writes what out holds; after a failed write, nothing more is.
func (t *timeline) writeOut() {
	if t.err == nil && len(t.out) > 0 {
		if _, err := t.f.Write(t.out); err != nil {
			t.err = fmt.Errorf("write recording: %w", err)
		}
	}
	t.out = t.out[:0]
}

func at(s []int16, i int64) int16 {
	if i < int64(len(s)) {
		return s[i]
	}
	return 0
}

func shift(s []int16, n int64) []int16 {
	if n >= int64(len(s)) {
		return s[:0]
	}
	return s[:copy(s, s[n:])]
}

// finish ends the recording at the line time clock: agent audio still
// queued then was never heard.
func (t *timeline) finish(clock int64) (Result, error) {
	end := max(clock, t.clock, t.base)
	if t.agentEnd > end {
		t.res.Unplayed = samplesToDuration(t.agentEnd - end)
		t.right = t.right[:min(int64(len(t.right)), end-t.base)]
	}
	t.flushTo(end)
	t.writeOut()
	err := t.err
	if err == nil {
		err = patchHeader(t.f, end)
	}
	if cerr := t.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close recording: %w", cerr)
	}
	if err != nil {
		os.Remove(t.f.Name())
		return Result{}, err
	}
	t.res.Path = t.f.Name()
	t.res.Bytes = wavHeaderLen + end*4
	t.res.Duration = samplesToDuration(end)
	return t.res, nil
}

// discard abandons the file.
func (t *timeline) discard() {
	t.f.Close()
	os.Remove(t.f.Name())
}

func samplesToDuration(n int64) time.Duration {
	return time.Duration(n) * time.Second / SampleRate
}
