// Package g711 is G.711 mu-law, the phone line's audio coding (8 kHz, one
// byte per sample): the call simulator reads and writes it, the sandbox
// provider speaks and listens in it.
package g711

import "math/bits"

// Encode encodes one 16-bit linear sample as mu-law.
func Encode(sample int16) byte {
	const bias, clip = 0x84, 32635
	s := int(sample)
	sign := 0
	if s < 0 {
		s, sign = -s, 0x80
	}
	if s > clip {
		s = clip
	}
	s += bias
	// The segment is where the highest bit is, from bit 7 (the bias sets
	// it or a higher one) to bit 14.
	exponent := bits.Len(uint(s)>>7) - 1
	mantissa := (s >> (exponent + 3)) & 0x0F
	return ^byte(sign | exponent<<4 | mantissa)
}

// Decode decodes one mu-law byte to a 16-bit linear sample.
func Decode(u byte) int16 {
	u = ^u
	t := (int(u&0x0F)<<3 + 0x84) << ((u & 0x70) >> 4)
	if u&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}
