package g711

import "sync"

// pcmTable holds every mu-law byte's linear sample as its two little-endian
// bytes, so decoding a frame is one table read and two stores per sample.
var pcmTable = sync.OnceValue(func() *[256][2]byte {
	var t [256][2]byte
	for u := range t {
		s := uint16(Decode(byte(u)))
		t[u] = [2]byte{byte(s), byte(s >> 8)}
	}
	return &t
})

// AppendPCM16LE appends to dst the 16-bit little-endian linear samples of
// mulaw, two bytes for each byte in: a phone call's 8 kHz audio as a model
// that takes 16-bit PCM hears it (its Decode, table-driven).
func AppendPCM16LE(dst, mulaw []byte) []byte {
	t := pcmTable()
	n := len(dst)
	dst = append(dst, make([]byte, 2*len(mulaw))...)
	out := dst[n:]
	for i, u := range mulaw {
		p := t[u]
		out[2*i] = p[0]
		out[2*i+1] = p[1]
	}
	return dst
}
