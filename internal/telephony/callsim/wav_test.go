package callsim

import (
	"bytes"
	"encoding/binary"
	"testing"
)

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
