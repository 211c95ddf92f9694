package callsim

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestMuLaw(t *testing.T) {
	// Known G.711 values.
	for _, c := range []struct {
		in   int16
		want byte
	}{{0, 0xFF}, {-1, 0x7F}, {32767, 0x80}, {-32768, 0x00}, {1000, 0xCE}, {-1000, 0x4E}} {
		if got := LinearToMuLaw(c.in); got != c.want {
			t.Errorf("LinearToMuLaw(%d) = %#x, want %#x", c.in, got, c.want)
		}
	}
	// Decoding and encoding again gives the same byte for every code.
	for u := range 256 {
		if u == 0x7F { // negative zero encodes as positive zero
			continue
		}
		if got := LinearToMuLaw(MuLawToLinear(byte(u))); got != byte(u) {
			t.Errorf("round trip of %#x = %#x", u, got)
		}
	}
}

func pcmWAV(samples []int16, rate uint32, channels uint16) []byte {
	var b bytes.Buffer
	data := make([]byte, 2*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(data[2*i:], uint16(s))
	}
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+len(data)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), channels, rate, rate * 2, uint16(2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("LIST")
	binary.Write(&b, binary.LittleEndian, uint32(4))
	b.WriteString("INFO")
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

func TestWAV(t *testing.T) {
	samples := []int16{0, 1000, -1000, 32767}
	got, err := ReadWAV(bytes.NewReader(pcmWAV(samples, 8000, 1)))
	if err != nil || !bytes.Equal(got, []byte{0xFF, 0xCE, 0x4E, 0x80}) {
		t.Fatalf("PCM WAV = %x %v", got, err)
	}
	var out bytes.Buffer
	mulaw := []byte{1, 2, 3, 4, 5}
	if err := WriteWAV(&out, mulaw); err != nil {
		t.Fatal(err)
	}
	back, err := ReadWAV(&out)
	if err != nil || !bytes.Equal(back, mulaw) {
		t.Fatalf("mu-law round trip = %x %v", back, err)
	}
	for name, bad := range map[string][]byte{
		"empty":     nil,
		"not a WAV": []byte("hello, this is not audio at all"),
		"16 kHz":    pcmWAV(samples, 16000, 1),
		"stereo":    pcmWAV(samples, 8000, 2),
		"truncated": pcmWAV(samples, 8000, 1)[:30],
	} {
		if _, err := ReadWAV(bytes.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
