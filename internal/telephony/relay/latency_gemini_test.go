package relay

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/agentline/agentline/internal/g711"
)

func voiceFrames() (voiced, silent []byte) {
	b := make([]byte, 160)
	for i := range b {
		b[i] = g711.Encode(int16(6000 - 12000*((i/10)%2)))
	}
	voiced = base64.StdEncoding.AppendEncode(nil, b)
	silent = base64.StdEncoding.AppendEncode(nil, bytes.Repeat([]byte{0xFF}, 160))
	return voiced, silent
}

// The voice check marks a loud frame's end and leaves a silent one's, a
// frame with no timestamp counts for nothing, and a frame costs no
// allocation once the buffer has grown.
func TestVoiceEndMarksVoicedFrames(t *testing.T) {
	voiced, silent := voiceFrames()
	var v voiceEnd
	v.frame(voiced, 100)
	v.frame(silent, 120)
	v.frame(voiced, -1)
	if !v.fresh.Load() || v.lastEnd.Load() != 120 {
		t.Fatalf("fresh %v, last end %d; want true, 120", v.fresh.Load(), v.lastEnd.Load())
	}
	if n := testing.AllocsPerRun(100, func() { v.frame(voiced, 140) }); n != 0 {
		t.Errorf("%v allocations per frame", n)
	}
}

// BenchmarkVoiceEndFrame is the voice check's cost per caller frame of a
// Gemini call.
func BenchmarkVoiceEndFrame(b *testing.B) {
	voiced, _ := voiceFrames()
	var v voiceEnd
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		v.frame(voiced, int64(i)*20)
	}
}
