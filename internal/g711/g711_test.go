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
