package relay

import (
	"encoding/base64"
	"math"
	"sync/atomic"
	"time"

	"github.com/agentline/agentline"
)

// Turn latency (OpenAI realtime): from the caller's end of speech to the
// first agent audio of the answer written to the carrier.
//
// The model says where the speech ended as audio_end_ms of its
// input_audio_buffer.speech_stopped: a position in the caller audio the
// relay appended, counted from the first frame. The relay maps it to the
// carrier's clock (Twilio's media.timestamp, ms since the stream started)
// by the latest appended frame's offset between the two (which a dropped
// frame shifts), and the carrier's clock to its own by the earliest
// arrival seen: a frame's end timestamp against when it was read, the
// minimum over the call, so that network jitter only ever delays frames
// and never moves the anchor. Calls whose carrier sends no timestamps
// measure nothing.
//
// The per-frame cost is a timestamp scan, a decoded-length sum and two
// atomic stores: no allocation, no lock.
type turnClock struct {
	inBytes int64        // caller audio appended to the model's buffer, mu-law bytes; the carrier reader's own
	offset  atomic.Int64 // carrier ms minus buffer ms of the latest appended frame; noOffset before one
	anchor  atomic.Int64 // min over frames of read time (unix ns) minus the frame's end on the carrier clock (ns)
}

const noOffset = math.MinInt64

func (t *turnClock) init() {
	t.offset.Store(noOffset)
	t.anchor.Store(math.MaxInt64)
}

// caller accounts one caller frame appended to the model's buffer, read at
// now with carrier timestamp ts (-1 when none).
func (t *turnClock) caller(payload []byte, ts int64, now time.Time) {
	n := int64(base64.StdEncoding.DecodedLen(len(payload)) - padding(payload))
	if ts >= 0 {
		t.offset.Store(ts - t.inBytes/8)
		if a := now.UnixNano() - (ts*8+n)*int64(time.Millisecond)/8; a < t.anchor.Load() {
			t.anchor.Store(a)
		}
	}
	t.inBytes += n
}

// speechEnd returns the relay-clock time (unix ns) of the buffer position
// audioEndMs, or 0 when the carrier's clock is unknown.
func (t *turnClock) speechEnd(audioEndMs int64) int64 {
	off, anchor := t.offset.Load(), t.anchor.Load()
	if off == noOffset || anchor == math.MaxInt64 || audioEndMs < 0 {
		return 0
	}
	return anchor + (audioEndMs+off)*int64(time.Millisecond)
}

// speechStopped notes the end of the caller's turn, which the next agent
// item's first audio answers.
func (c *Call) speechStopped(msg []byte) {
	v, _, ok := field(msg, "audio_end_ms")
	if !ok {
		return
	}
	var ms int64
	for _, d := range v {
		if d < '0' || d > '9' || ms > 1<<40 {
			return
		}
		ms = ms*10 + int64(d-'0')
	}
	end := c.clock.speechEnd(ms)
	if end == 0 {
		return
	}
	c.mu.Lock()
	c.callerTurnEnd = end
	c.mu.Unlock()
}

// turnAnswered reports the latency of a turn whose answer's first audio
// was written at now (turnEnd as taken under the lock with it).
func (c *Call) turnAnswered(turnEnd int64, now time.Time) {
	d := max(time.Duration(now.UnixNano()-turnEnd), 0)
	c.opts.OnEvent(Event{Type: agentline.EventTurnLatency, Latency: d, At: now})
}
