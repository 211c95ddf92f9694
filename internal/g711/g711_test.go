package g711

import "testing"

func TestMuLaw(t *testing.T) {
	// Known G.711 values.
	for _, c := range []struct {
		in   int16
		want byte
	}{{0, 0xFF}, {-1, 0x7F}, {32767, 0x80}, {-32768, 0x00}, {1000, 0xCE}, {-1000, 0x4E}} {
		if got := Encode(c.in); got != c.want {
			t.Errorf("Encode(%d) = %#x, want %#x", c.in, got, c.want)
		}
	}
	// Decoding and encoding again gives the same byte for every code.
	for u := range 256 {
		if u == 0x7F { // negative zero encodes as positive zero
			continue
		}
		if got := Encode(Decode(byte(u))); got != byte(u) {
			t.Errorf("round trip of %#x = %#x", u, got)
		}
	}
}

func TestAppendPCM16LE(t *testing.T) {
	all := make([]byte, 256)
	for u := range all {
		all[u] = byte(u)
	}
	prefix := []byte{0xAA}
	got := AppendPCM16LE(prefix, all)
	if len(got) != 1+512 || got[0] != 0xAA {
		t.Fatalf("len %d, first %#x: the prefix is not kept", len(got), got[0])
	}
	for u := range 256 {
		s := int16(uint16(got[1+2*u]) | uint16(got[2+2*u])<<8)
		if s != Decode(byte(u)) {
			t.Errorf("%#x: %d, Decode gives %d", u, s, Decode(byte(u)))
		}
	}
	if got := AppendPCM16LE(nil, nil); len(got) != 0 {
		t.Errorf("empty input gave %d bytes", len(got))
	}
}

// One 20 ms phone frame (160 bytes) into 320 bytes of PCM.
func BenchmarkAppendPCM16LE(b *testing.B) {
	frame := make([]byte, 160)
	for i := range frame {
		frame[i] = byte(i * 7)
	}
	out := make([]byte, 0, 320)
	b.ReportAllocs()
	for b.Loop() {
		out = AppendPCM16LE(out[:0], frame)
	}
}
