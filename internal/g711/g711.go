// Package g711 is G.711 mu-law, the phone line's audio coding (8 kHz, one
// byte per sample): the call simulator reads and writes it, the sandbox
// provider speaks and listens in it.
package g711

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
	exponent := 7
	for mask := 0x4000; s&mask == 0 && exponent > 0; mask >>= 1 {
		exponent--
	}
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
