package resample

import (
	"bytes"
	"encoding/base64"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/agentline/agentline/internal/g711"
)

// pcm16 is samples as 16-bit little-endian bytes.
func pcm16(samples []int16) []byte {
	b := make([]byte, 0, 2*len(samples))
	for _, s := range samples {
		b = append(b, byte(s), byte(uint16(s)>>8))
	}
	return b
}

// tone is n samples of a sine of freq Hz at 24 kHz with the given peak.
func tone(n int, freq, peak float64) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(math.Round(peak * math.Sin(2*math.Pi*freq*float64(i)/24000)))
	}
	return s
}

// noisy is a test signal with energy everywhere: speech-like tones and
// white noise, clipping at times.
func noisy(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	s := make([]int16, n)
	for i := range s {
		v := 12000*math.Sin(2*math.Pi*440*float64(i)/24000) + r.NormFloat64()*9000
		s[i] = int16(max(-32768, min(32767, v)))
	}
	return pcm16(s)
}

// chunked runs src through a fresh Down3 in the given chunk sizes (cycled),
// checking each call's output only appends to dst.
func chunked(t testing.TB, src []byte, sizes []int) []byte {
	var d Down3
	out := []byte{0xEE}
	for i := 0; len(src) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(src))
		before := bytes.Clone(out)
		out = d.AppendMuLaw(out, src[:n])
		if !bytes.Equal(out[:len(before)], before) {
			t.Fatal("AppendMuLaw changed what dst held")
		}
		src = src[n:]
	}
	return out[1:]
}

func TestChunksGiveTheSameBytes(t *testing.T) {
	src := noisy(24000, 1) // one second
	var d Down3
	whole := d.AppendMuLaw(nil, src)
	if len(whole) != 8000 {
		t.Fatalf("one second at 24 kHz gave %d samples, want 8000", len(whole))
	}
	r := rand.New(rand.NewPCG(2, 2))
	for trial := range 20 {
		sizes := make([]int, 1+r.IntN(8))
		for i := range sizes {
			sizes[i] = r.IntN(2000) // odd sizes, zero sizes and frames larger than a block
		}
		if trial == 0 {
			sizes = []int{1}
		}
		if got := chunked(t, src, sizes); !bytes.Equal(got, whole) {
			t.Fatalf("chunks %v: output differs from one call's", sizes)
		}
	}
}

func TestOddByteIsCarried(t *testing.T) {
	src := pcm16(tone(9, 1000, 10000))
	var whole, split Down3
	want := whole.appendPCM(nil, src)
	got := split.appendPCM(nil, src[:5])
	if len(got) != 0 {
		t.Fatalf("2.5 samples gave %d outputs", len(got))
	}
	if !split.odd || split.pending != 2 {
		t.Fatalf("after 5 bytes: odd %v, pending %d; want a kept byte and 2 samples", split.odd, split.pending)
	}
	got = split.appendPCM(got, src[5:6])
	if len(got) != 1 || split.odd {
		t.Fatalf("the sixth byte completed the third sample but gave %d outputs (odd %v)", len(got), split.odd)
	}
	got = split.appendPCM(got, src[6:])
	if !slicesEqual(got, want) {
		t.Errorf("split %v, whole %v", got, want)
	}
}

func slicesEqual(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestResetForgets(t *testing.T) {
	src := noisy(4800, 3)
	var fresh, used Down3
	want := fresh.AppendMuLaw(nil, src)
	used.AppendMuLaw(nil, noisy(1001, 4)) // leaves history, pending samples and an odd byte
	used.Reset()
	if got := used.AppendMuLaw(nil, src); !bytes.Equal(got, want) {
		t.Error("after Reset the output depends on what came before")
	}
	if used.pending != fresh.pending || used.odd != fresh.odd {
		t.Error("after Reset the state differs from a fresh one's")
	}
}

func TestZeroLength(t *testing.T) {
	var d Down3
	if got := d.AppendMuLaw(nil, nil); len(got) != 0 {
		t.Errorf("nil input gave %d bytes", len(got))
	}
	dst := []byte{1, 2}
	if got := d.AppendMuLaw(dst, []byte{}); !bytes.Equal(got, []byte{1, 2}) {
		t.Errorf("empty input changed dst to %v", got)
	}
	if d != (Down3{}) {
		t.Error("empty input changed the state")
	}
}

func TestSilenceAndDC(t *testing.T) {
	var d Down3
	for _, u := range d.AppendMuLaw(nil, make([]byte, 2*4800)) {
		if u != g711.Encode(0) {
			t.Fatalf("silence gave %#x", u)
		}
	}
	// A constant comes out as itself once the filter has filled: its gain
	// at DC is one.
	for _, level := range []int16{1000, -20000, 32767, -32768} {
		src := make([]int16, 2400)
		for i := range src {
			src[i] = level
		}
		var d Down3
		out := d.appendPCM(nil, pcm16(src))
		for i, s := range out[taps/3+1:] {
			if diff := int(s) - int(level); diff < -1 || diff > 1 {
				t.Fatalf("DC %d: sample %d is %d", level, taps/3+1+i, s)
			}
		}
	}
}

// FuzzDown3 feeds any bytes in any chunking: no panic, and the same output
// as one call.
func FuzzDown3(f *testing.F) {
	f.Add(noisy(1000, 5), uint8(7), uint8(160))
	f.Add([]byte{0xFF, 0x7F, 0x00, 0x80, 0x01}, uint8(1), uint8(2))
	f.Add([]byte{}, uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, src []byte, a, b uint8) {
		var d Down3
		whole := d.AppendMuLaw(nil, src)
		if want := len(src) / 6; len(whole) != want {
			t.Fatalf("%d bytes gave %d outputs, want %d", len(src), len(whole), want)
		}
		if got := chunked(t, src, []int{int(a), int(b) * 9}); !bytes.Equal(got, whole) {
			t.Fatalf("chunks of %d and %d: output differs from one call's", a, int(b)*9)
		}
	})
}

// One 20 ms frame of the model's audio: 480 samples at 24 kHz into 160
// bytes of mu-law.
func BenchmarkDown3Frame(b *testing.B) {
	src := noisy(480*50, 6)
	out := make([]byte, 0, 160)
	var d Down3
	b.ReportAllocs()
	i := 0
	start := cpuClock()
	for b.Loop() {
		frame := src[i*960 : (i+1)*960]
		out = d.AppendMuLaw(out[:0], frame)
		i = (i + 1) % 50
	}
	reportCPU(b, start)
}

// The caller's side for comparison (g711 has its own benchmark too): one
// 20 ms frame of 160 mu-law bytes into 320 bytes of 16-bit PCM.
func BenchmarkAppendPCM16LEFrame(b *testing.B) {
	frame := noisy(160, 9)[:160]
	out := make([]byte, 0, 320)
	b.ReportAllocs()
	start := cpuClock()
	for b.Loop() {
		out = g711.AppendPCM16LE(out[:0], frame)
	}
	reportCPU(b, start)
}

// The relay's base64 on each side of a frame, for the record: the carrier's
// 160 mu-law bytes and the model's 960 PCM bytes.
func BenchmarkBase64(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"mulaw160", 160}, {"pcm24k960", 960}, {"pcm8k320", 320}} {
		raw := noisy(c.n/2, 7)
		enc := base64.StdEncoding.EncodeToString(raw)
		b.Run("encode/"+c.name, func(b *testing.B) {
			dst := make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
			b.ReportAllocs()
			start := cpuClock()
			for b.Loop() {
				base64.StdEncoding.Encode(dst, raw)
			}
			reportCPU(b, start)
		})
		b.Run("decode/"+c.name, func(b *testing.B) {
			dst := make([]byte, len(raw))
			src := []byte(enc)
			b.ReportAllocs()
			start := cpuClock()
			for b.Loop() {
				if _, err := base64.StdEncoding.Decode(dst, src); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}
