package recording

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"time"

	"github.com/agentline/agentline/internal/g711"
)

const (
	// window is how far behind the line time a caller frame may still land
	// (jitter, reordering); older samples are final.
	window = SampleRate
	// flushChunk is the least made final at a time.
	flushChunk = SampleRate / 5
	// writeFrames is how much final audio is gathered before a write: about
	// a second (32 KiB). A write syscall every 200 ms was a third of a
	// recording's CPU (BenchmarkPacedCalls' profile).
	writeFrames = 8192
	// bufFrames is buf's capacity: what waits for its write, the window
	// and half a second of agent audio queued ahead, so that buf does not
	// grow in a call (growing it copied it: a sixth of a recording's CPU).
	bufFrames = writeFrames + window + flushChunk + SampleRate/2
	// frameBytes is one stereo frame of 16-bit samples.
	frameBytes = wavChannels * wavBits / 8
	// maxCuts bounds Result.Cuts; ClearCuts counts them all.
	maxCuts = 1024
)

// pcm is the 16-bit linear sample of each mu-law byte (g711.Decode), looked
// up rather than computed: the computation's sign branch mispredicts on
// audio. Read-only after package initialisation.
var pcm = func() (t [256]uint16) {
	for u := range t {
		t[u] = uint16(g711.Decode(byte(u)))
	}
	return t
}()

// timeline places the decoded audio of both sides on the line's time and
// writes it out once no later event can change it. Only the writer
// goroutine uses it.
//
// Positions are in samples since the stream started. buf holds the file's
// data from start onwards, already interleaved as the WAV stores it (caller
// left, agent right, little-endian), so that a write is a slice of it and
// silence is its zero bytes. Everything before start is in the file;
// everything before base is final, waiting for its write. From base on, buf
// holds the caller's recent frames (up to window behind the line time) and
// the agent audio queued at the carrier, which may reach far beyond the
// line time until a clear drops it.
type timeline struct {
	f         *os.File
	start     int64
	base      int64
	buf       []byte
	clock     int64 // line time: the end of the latest caller frame, or an agent event's if later
	agentEnd  int64 // where the agent audio queued at the carrier ends
	maxSamp   int64
	scratch   []byte // decoded payload
	unescaped []byte // a payload with JSON escapes removed
	err       error  // the first write error; later writes are skipped
	res       Result
}

func newTimeline(f *os.File, maxSamp int64) (*timeline, error) {
	t := &timeline{f: f, maxSamp: maxSamp, buf: make([]byte, 0, bufFrames*frameBytes)}
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
			t.settle()
		case kindAgent:
			t.lineAt(ev.at)
			t.agent(ev, b.payload(ev))
		case kindGap:
			t.lineAt(ev.at)
			t.gap(ev.at, ev.n)
		case kindClear:
			t.lineAt(ev.at)
			t.clear(ev.at)
		}
	}
}

// lineAt moves the line time on to at, the line time an agent event
// carries. While caller frames come they set it; when they stop (the
// caller's side sends nothing) the wall clock does, and what falls window
// behind becomes final, so that buf stays small however long the agent
// speaks alone.
func (t *timeline) lineAt(at int64) {
	if at > t.clock {
		t.clock = at
		t.settle()
	}
}

// settle makes final what is more than window behind the line time, as
// the line time moves, so that buf holds about writeFrames plus window
// however many events a batch brings.
func (t *timeline) settle() {
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
	t.place(pos, 0, mu)
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
	t.place(start, 1, mu)
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
	t.silenceRight(at, t.agentEnd)
	t.res.ClearCuts++
	if len(t.res.Cuts) < maxCuts {
		t.res.Cuts = append(t.res.Cuts, Cut{At: samplesToDuration(at), Dropped: samplesToDuration(t.agentEnd - at)})
	}
	t.agentEnd = at
}

// place decodes mu-law into channel ch (0 left, 1 right) from position
// pos, overwriting what was there.
func (t *timeline) place(pos int64, ch int, mu []byte) {
	if len(mu) == 0 {
		return
	}
	i := pos - t.start
	t.grow(i + int64(len(mu)))
	d := t.buf[i*frameBytes+int64(2*ch):]
	for k, u := range mu {
		binary.LittleEndian.PutUint16(d[k*frameBytes:], pcm[u])
	}
}

// silenceRight zeroes the agent channel from position from to to (where
// buf holds it): audio a clear dropped.
func (t *timeline) silenceRight(from, to int64) {
	to = min(to-t.start, int64(len(t.buf)/frameBytes))
	for i := from - t.start; i < to; i++ {
		t.buf[i*frameBytes+2], t.buf[i*frameBytes+3] = 0, 0
	}
}

// grow makes buf hold n frames, silence where nothing was placed.
func (t *timeline) grow(n int64) {
	if need := n * frameBytes; int64(len(t.buf)) < need {
		t.buf = append(t.buf, make([]byte, need-int64(len(t.buf)))...)
	}
}

// flushTo makes the samples before to final, silence where a side has
// none, and writes them about once a second (writeFrames) straight from
// buf.
func (t *timeline) flushTo(to int64) {
	for t.base < to {
		t.base += min(to-t.base, writeFrames-(t.base-t.start))
		t.grow(t.base - t.start)
		if t.base-t.start >= writeFrames {
			t.writeOut()
		}
	}
}

// writeOut writes the final samples and drops them from buf; after a
// failed write, nothing more is written.
func (t *timeline) writeOut() {
	n := (t.base - t.start) * frameBytes
	if n == 0 {
		return
	}
	if t.err == nil {
		if _, err := t.f.Write(t.buf[:n]); err != nil {
			t.err = fmt.Errorf("write recording: %w", err)
		}
	}
	t.buf = t.buf[:copy(t.buf, t.buf[n:])]
	t.start = t.base
}

// finish ends the recording at the line time clock: agent audio still
// queued then was never heard.
func (t *timeline) finish(clock int64) (Result, error) {
	end := max(clock, t.clock, t.base)
	if t.agentEnd > end {
		t.res.Unplayed = samplesToDuration(t.agentEnd - end)
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
