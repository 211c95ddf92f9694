// Package recording records phone calls as stereo WAV files (caller left,
// agent right) and keeps them in a local directory or an S3-compatible
// bucket.
//
// The relay forwards audio as base64 without decoding it and must never wait
// for a disk, so a Recorder takes copies of the payloads in a bounded buffer
// and does all decoding, placing and writing on its own goroutine. When that
// goroutine falls behind and the buffer is full, audio is dropped, counted and
// recorded as silence of the same length: the call always goes first.
package recording

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// SampleRate is the line's rate (G.711): one mu-law byte is one sample.
const SampleRate = 8000

const samplesPerMs = SampleRate / 1000

// Options tune a Recorder. The zero value suits a phone call.
type Options struct {
	// Dir holds the WAV while it is written (os.TempDir when empty). A call
	// is written there rather than kept in memory: an hour is 115 MB.
	Dir string
	// BufferBytes bounds the base64 audio waiting for the writer (default
	// 64 KiB, about 3 s of both sides). It is allocated twice, up front, so
	// that the relay's calls never allocate.
	BufferBytes int
	// MaxDuration bounds the recording (default 4 h, the carrier's longest
	// call): a timestamp beyond it is refused rather than filled with hours
	// of silence.
	MaxDuration time.Duration
	// WriteEvery is how often the writer takes what the relay handed over
	// (default 1 s, about 22 KiB of both sides), or sooner when the buffer
	// is half full. Each wake-up costs scheduler time that the decoding of
	// 200 ms did not pay for (BenchmarkPacedCalls: every frame, then every
	// 200 ms, were a measurable part of a recording's CPU). Late caller
	// frames are told by their timestamps, not by when the writer runs, so
	// the recording is the same.
	WriteEvery time.Duration

	// Start is when the stream started on the wall clock (line time 0;
	// the time of New when zero), and Now the wall clock (time.Now when
	// nil). A carrier sends caller frames without pause, so their
	// timestamps are the line's clock; but frames can stop (a simulator
	// while its caller is silent, a stalled line) while the call goes on,
	// so the line time is never taken to be earlier than the wall clock
	// since Start: the agent's audio is placed, and the recording ends,
	// where they happened.
	Start time.Time
	Now   func() time.Time

	// batchHook, in tests, runs before the writer takes each batch: it can
	// hold the writer to make it fall behind without timing.
	batchHook func()
}

// Recorder records one call. Its Caller, Agent and Clear methods may be
// called from any goroutine and never wait for the writer: they take a
// mutex held only for a copy into a preallocated buffer.
type Recorder struct {
	wake  chan struct{} // capacity 1: a pending wake-up is enough
	every time.Duration
	done  chan struct{} // closed when the writer has finished
	stop  chan struct{} // closed by Close

	mu      sync.Mutex
	cur     *batch // filled by the relay
	spare   *batch // the writer's, swapped with cur
	clock   int64  // line time in samples: the end of the latest caller frame
	start   time.Time
	now     func() time.Time
	endAt   time.Time // set by End or Close
	closed  bool      // by End or Close: no more audio
	stopped bool      // by Close: stop is closed
	counts  dropCounts
	maxSamp int64

	state atomic.Int32 // running, finished or abandoned: whoever moves it first decides
	hook  func()
	tl    *timeline
	res   Result
	err   error
}

// dropCounts are kept by the relay side: what never reached the writer.
type dropCounts struct {
	callerFrames, agentBytes int64
	gaps                     int64
	callerDropping           bool
	agentDropping            bool
	rejected                 int64
	lost                     int64
}

// New creates the WAV file and starts the writer. Close must be called.
func New(opts Options) (*Recorder, error) {
	if opts.BufferBytes <= 0 {
		opts.BufferBytes = 64 << 10
	}
	if opts.MaxDuration <= 0 {
		opts.MaxDuration = 4 * time.Hour
	}
	if opts.WriteEvery <= 0 {
		opts.WriteEvery = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Start.IsZero() {
		opts.Start = opts.Now()
	}
	f, err := os.CreateTemp(opts.Dir, "call-*.wav")
	if err != nil {
		return nil, fmt.Errorf("create recording file: %w", err)
	}
	maxSamp := min(opts.MaxDuration.Milliseconds()*samplesPerMs, maxFrames)
	tl, err := newTimeline(f, maxSamp)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	events := max(64, opts.BufferBytes/128)
	r := &Recorder{
		wake:    make(chan struct{}, 1),
		every:   opts.WriteEvery,
		done:    make(chan struct{}),
		stop:    make(chan struct{}),
		cur:     newBatch(opts.BufferBytes, events),
		spare:   newBatch(opts.BufferBytes, events),
		maxSamp: maxSamp,
		start:   opts.Start,
		now:     opts.Now,
		hook:    opts.batchHook,
		tl:      tl,
	}
	go r.run()
	return r, nil
}

// Caller records one caller frame: the carrier's base64 payload and its
// media.timestamp (ms since the stream started). The bytes are copied, so
// the relay may reuse its buffer at once.
func (r *Recorder) Caller(payloadB64 []byte, timestampMs int64) {
	n := decodedLen(payloadB64)
	if timestampMs < 0 || timestampMs > r.maxSamp/samplesPerMs || timestampMs*samplesPerMs+n > r.maxSamp {
		r.mu.Lock()
		r.counts.rejected++
		r.mu.Unlock()
		return
	}
	pos := timestampMs * samplesPerMs
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.clock = max(r.clock, pos+n)
	ok := r.cur.add(event{kind: kindCaller, at: pos, n: n}, payloadB64)
	r.counts.noteCaller(ok)
	r.unlockAdded()
}

// Agent records one model audio delta (base64 mu-law) as the carrier will
// play it: after the agent audio already queued, or now if the line is idle.
// "Now" is the end of the latest caller frame, the clock the recording
// shares with the carrier, or the wall clock since the stream started when
// that is later (no caller frames came meanwhile).
func (r *Recorder) Agent(payloadB64 []byte) {
	n := decodedLen(payloadB64)
	now := r.now()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	ev := event{kind: kindAgent, at: r.lineTime(now), n: n}
	ok := r.cur.add(ev, payloadB64)
	if !ok {
		// The carrier plays this audio all the same: keep its place as a gap,
		// so that the agent audio after it is not moved earlier.
		ev.kind = kindGap
		if !r.cur.extendGap(n) && !r.cur.add(ev, nil) {
			r.counts.lost++
		}
	}
	r.counts.noteAgent(ok, n)
	r.unlockAdded()
}

// Clear records a barge-in: the carrier drops the agent audio it has not
// played yet, so the agent channel stops at the current line time.
func (r *Recorder) Clear() {
	now := r.now()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	// A clear right after a clear drops nothing more.
	if !r.cur.lastIs(kindClear) && !r.cur.add(event{kind: kindClear, at: r.lineTime(now)}, nil) {
		r.counts.lost++
	}
	r.unlockAdded()
}

// lineTime is the line time at wall time now, in samples: the end of the
// latest caller frame, or the time since the stream started if later.
// r.mu is held.
func (r *Recorder) lineTime(now time.Time) int64 {
	wall := int64(now.Sub(r.start) * SampleRate / time.Second)
	return max(r.clock, min(wall, r.maxSamp))
}

// End says when the call ended on the wall clock: the recording ends at
// the line time then, rather than when Close is called (storing the call's
// end comes first). Audio handed over later is ignored. A nil Recorder
// (a call that is not recorded) ignores it.
func (r *Recorder) End(at time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if !r.closed {
		r.endAt, r.closed = at, true
	}
	r.mu.Unlock()
}

// unlockAdded releases the lock an addition to the batch took, waking the
// writer early once the batch is half full (otherwise its tick takes it).
func (r *Recorder) unlockAdded() {
	full := r.cur.halfFull()
	r.mu.Unlock()
	if !full {
		return
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (c *dropCounts) noteCaller(ok bool) {
	if !ok {
		c.callerFrames++
		if !c.callerDropping {
			c.gaps++
		}
	}
	c.callerDropping = !ok
}

func (c *dropCounts) noteAgent(ok bool, n int64) {
	if !ok {
		c.agentBytes += n
		if !c.agentDropping {
			c.gaps++
		}
	}
	c.agentDropping = !ok
}

// Close stops recording, writes what is buffered, finishes the WAV header
// and reports the file. Calls made after Close are ignored. When ctx ends
// first, the file is abandoned (and removed by the writer) and ctx's error
// returned.
func (r *Recorder) Close(ctx context.Context) (Result, error) {
	now := r.now()
	r.mu.Lock()
	if r.endAt.IsZero() {
		r.endAt = now
	}
	r.closed = true
	already := r.stopped
	r.stopped = true
	r.mu.Unlock()
	if !already {
		close(r.stop)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(stateRunning, stateAbandoned) {
			return Result{}, fmt.Errorf("close recording: %w", context.Cause(ctx))
		}
		<-r.done // the writer has finished the file: it is only closing done
	}
	return r.res, r.err
}

const (
	stateRunning int32 = iota
	stateFinished
	stateAbandoned
)

// run is the writer: every WriteEvery (or when woken early) it swaps the
// relay's batch for its empty one and processes it outside the lock, until
// Close and the last batch.
func (r *Recorder) run() {
	defer close(r.done)
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for {
		select {
		case <-r.wake:
		case <-tick.C:
		case <-r.stop:
		}
		if r.hook != nil {
			r.hook()
		}
		b, closing := r.take()
		r.tl.apply(b)
		if closing {
			r.finish()
			return
		}
		if r.state.Load() == stateAbandoned {
			r.tl.discard()
			return
		}
	}
}

func (r *Recorder) take() (*batch, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spare.reset()
	r.cur, r.spare = r.spare, r.cur
	return r.spare, r.closed
}

func (r *Recorder) finish() {
	r.mu.Lock()
	counts, end := r.counts, r.lineTime(r.endAt)
	r.mu.Unlock()
	res, err := r.tl.finish(end) // the line time includes frames the writer never got
	res.DroppedCallerFrames = counts.callerFrames
	res.DroppedAgentBytes = counts.agentBytes
	res.Gaps = counts.gaps
	res.Rejected += counts.rejected
	res.Lost = counts.lost
	r.res, r.err = res, err
	if !r.state.CompareAndSwap(stateRunning, stateFinished) {
		os.Remove(res.Path) // Close gave up meanwhile: nobody will take the file
	}
}
