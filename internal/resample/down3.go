// Package resample converts the audio of a model that speaks 24 kHz 16-bit
// PCM (Gemini Live) to a phone line's 8 kHz mu-law.
package resample

import "github.com/agentline/agentline/internal/g711"

const (
	// keep is how many input samples an output needs from before the
	// three that produce it.
	keep = taps - 3
	// block is how many new samples one pass filters: one 20 ms frame at
	// 24 kHz, so a frame's call is one pass.
	block = 480
)

// Down3 turns 24 kHz 16-bit little-endian PCM into 8 kHz mu-law: a
// polyphase FIR low-pass and decimation by 3, its filter state kept across
// calls, so frame edges make no clicks. The zero value is ready to use (its
// history is silence).
type Down3 struct {
	// buf[:keep] is the history the next output reaches back into;
	// buf[keep:keep+pending] are samples that do not yet make an output.
	buf     [keep + block]float32
	pending int
	odd     bool // a sample's low byte waits for its high byte
	low     byte
}

// AppendMuLaw appends to dst the 8 kHz mu-law samples of src (24 kHz, 16-bit
// LE). src may have any length: a trailing odd byte or samples short of a
// full output are kept for the next call.
func (d *Down3) AppendMuLaw(dst, src []byte) []byte {
	var out [block / 3]int16
	for {
		n, rest := d.step(src, out[:])
		for _, s := range out[:n] {
			dst = append(dst, g711.Encode(s))
		}
		if len(rest) == len(src) {
			return dst
		}
		src = rest
	}
}

// appendPCM is AppendMuLaw before the mu-law coding: the filter's 16-bit
// output, which the quality tests measure.
func (d *Down3) appendPCM(dst []int16, src []byte) []int16 {
	var out [block / 3]int16
	for {
		n, rest := d.step(src, out[:])
		dst = append(dst, out[:n]...)
		if len(rest) == len(src) {
			return dst
		}
		src = rest
	}
}

// Reset forgets the state (after a barge-in the model's next audio starts
// fresh).
func (d *Down3) Reset() { *d = Down3{} }

// step takes up to one block of samples from src, writes the outputs they
// complete to out and returns how many, and what of src it left. A lone
// last byte is kept as the low half of the next sample.
func (d *Down3) step(src []byte, out []int16) (int, []byte) {
	x := d.buf[keep:]
	i := d.pending
	if d.odd && len(src) > 0 {
		x[i] = float32(int16(uint16(d.low) | uint16(src[0])<<8))
		i++
		src = src[1:]
		d.odd = false
	}
	for ; i < block && len(src) >= 2; i++ {
		x[i] = float32(int16(uint16(src[0]) | uint16(src[1])<<8))
		src = src[2:]
	}
	if len(src) == 1 && i < block {
		d.odd, d.low = true, src[0]
		src = src[1:]
	}
	n := i / 3
	h := coefficients()
	for j := range n {
		out[j] = toInt16(dot(h, (*[taps]float32)(d.buf[3*j:])))
	}
	used := 3 * n
	copy(d.buf[:], d.buf[used:keep+i])
	d.pending = i - used
	return n, src
}

// dot is the filter's output over one window of taps samples, oldest first.
// The taps' symmetry halves the multiplications; four sums break the chain
// of dependent additions, which would otherwise set the pace.
func dot(h *[taps / 2]float32, w *[taps]float32) float32 {
	var s0, s1, s2, s3 float32
	for k := 0; k < taps/2-3; k += 4 {
		s0 += h[k] * (w[k] + w[taps-1-k])
		s1 += h[k+1] * (w[k+1] + w[taps-2-k])
		s2 += h[k+2] * (w[k+2] + w[taps-3-k])
		s3 += h[k+3] * (w[k+3] + w[taps-4-k])
	}
	for k := taps / 2 / 4 * 4; k < taps/2; k++ {
		s0 += h[k] * (w[k] + w[taps-1-k])
	}
	return (s0 + s1) + (s2 + s3)
}

// toInt16 rounds to the nearest sample, clipping at full scale.
func toInt16(y float32) int16 {
	switch {
	case y >= 32767:
		return 32767
	case y <= -32768:
		return -32768
	case y >= 0:
		return int16(y + 0.5)
	default:
		return int16(y - 0.5)
	}
}
