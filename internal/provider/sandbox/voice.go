package sandbox

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/agentline/agentline/internal/g711"
)

// frame is one RTP packet's worth of PCMU: 20 ms at 8 kHz.
const (
	frame        = 20 * time.Millisecond
	frameSamples = 160
)

// voice streams the sandbox's audio track: a voice-like sound while the
// agent speaks, silence otherwise, one 20 ms frame per tick.
type voice struct {
	track *webrtc.TrackLocalStaticSample
	mu    sync.Mutex
	until time.Time
	n     int // samples generated, for the waveform's phase
}

func newVoice(track *webrtc.TrackLocalStaticSample) *voice { return &voice{track: track} }

// speak makes the next d of audio voice-like.
func (v *voice) speak(d time.Duration) {
	v.mu.Lock()
	v.until = time.Now().Add(d)
	v.mu.Unlock()
}

func (v *voice) run(ctx context.Context) {
	t := time.NewTicker(frame)
	defer t.Stop()
	buf := make([]byte, frameSamples)
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			v.mu.Lock()
			speaking := now.Before(v.until)
			v.mu.Unlock()
			if speaking {
				fillVoice(buf, v.n)
			} else {
				for i := range buf {
					buf[i] = g711.Encode(0)
				}
			}
			v.n += frameSamples
			if err := v.track.WriteSample(media.Sample{Data: buf, Duration: frame}); err != nil {
				return
			}
		}
	}
}

// fillVoice writes the voice-like sound as mu-law, from sample n on.
func fillVoice(buf []byte, n int) {
	for i := range buf {
		buf[i] = g711.Encode(int16(syllable(n+i) * 12000))
	}
}

// syllable is a voice-like waveform at sample n (8 kHz): 180 ms syllables
// with a pitch that rises and falls, three harmonics, an amplitude
// envelope, and short gaps between them.
func syllable(n int) float64 {
	const rate, syl = 8000.0, 1440 // 180 ms
	pos := n % syl
	if pos > syl*5/6 {
		return 0 // gap
	}
	k := float64(n / syl)
	pitch := 150 + 60*math.Sin(k*1.7) // Hz, varies per syllable
	t := float64(n) / rate
	env := math.Sin(math.Pi * float64(pos) / (syl * 5 / 6))
	w := math.Sin(2*math.Pi*pitch*t) + 0.5*math.Sin(4*math.Pi*pitch*t) + 0.25*math.Sin(6*math.Pi*pitch*t)
	return env * w / 1.75
}
