package relay

import (
	"encoding/base64"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentline/agentline/internal/g711"
)

// Turn latency on Gemini calls: from the caller's end of speech to the
// first agent audio of the answer written to the carrier, as on OpenAI
// calls, with the end of speech found by the relay itself.
//
// Gemini Live reports no end of speech while its automatic activity
// detection is on (the call's setting): its server messages say when the
// model was interrupted and when its turn is complete, and carry
// transcripts whose timing is not the audio's; activityEnd is a message the
// client sends when it detects activity itself, which would take turn
// taking away from the service. So the relay keeps, for each caller frame
// with a carrier timestamp, whether it is voiced (its RMS at least
// voicedRMS), and the carrier-clock end of the latest voiced one. When a
// model turn's first audio comes and a voiced frame came since the
// previous turn began, that end is the caller's end of speech, mapped to
// the relay's clock by the turn clock's anchor (turnClock, latency.go).
// The measure thus includes the service's wait for silence, the model's
// time and the relay's, as a caller perceives them.
type voiceEnd struct {
	buf     []byte       // the carrier reader's decoded frame
	lastEnd atomic.Int64 // carrier ms at the end of the latest voiced frame
	fresh   atomic.Bool  // a voiced frame came since the last answer began
}

// voicedRMS is the level from which a frame counts as speech: about
// -41 dBFS, above a phone line's noise floor and below quiet speech.
const voicedRMS = 300

// frame accounts one caller frame (base64 mu-law) stamped ts on the
// carrier's clock (-1 when none): no allocation once the buffer is grown.
func (v *voiceEnd) frame(payload []byte, ts int64) {
	if ts < 0 {
		return
	}
	var err error
	if v.buf, err = base64.StdEncoding.AppendDecode(v.buf[:0], payload); err != nil || len(v.buf) == 0 {
		return
	}
	sq := muLawSquares()
	var sum int64
	for _, u := range v.buf {
		sum += sq[u]
	}
	if sum < voicedRMS*voicedRMS*int64(len(v.buf)) {
		return
	}
	v.lastEnd.Store(ts + int64(len(v.buf))/8)
	v.fresh.Store(true)
}

// muLawSquares is each mu-law byte's linear sample squared.
var muLawSquares = sync.OnceValue(func() *[256]int64 {
	var t [256]int64
	for u := range t {
		s := int64(g711.Decode(byte(u)))
		t[u] = s * s
	}
	return &t
})

// answerStarts is a model turn's first audio: the caller's turn it answers
// ended at the latest voiced frame's end, if one came since the last.
func (g *geminiSide) answerStarts() {
	if !g.voice.fresh.Swap(false) {
		return
	}
	end := g.c.clock.atCarrier(g.voice.lastEnd.Load())
	if end == 0 {
		return
	}
	g.c.mu.Lock()
	g.c.callerTurnEnd = end
	g.c.mu.Unlock()
}

// atCarrier returns the relay-clock time (unix ns) of carrier time ms, or
// 0 while the carrier's clock is unknown.
func (t *turnClock) atCarrier(ms int64) int64 {
	anchor := t.anchor.Load()
	if anchor == math.MaxInt64 || ms < 0 {
		return 0
	}
	return anchor + ms*int64(time.Millisecond)
}
