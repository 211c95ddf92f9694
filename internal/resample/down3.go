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
	// phaseLen is how many samples of each phase one pass can hold.
	phaseLen = (keep + block) / 3
)

// Down3 turns 24 kHz 16-bit little-endian PCM into 8 kHz mu-law: a
// polyphase FIR low-pass and decimation by 3, its filter state kept across
// calls, so frame edges make no clicks. The zero value is ready to use (its
// history is silence).
type Down3 struct {
	// The input by phase: sample t (counted from the oldest kept) is
	// phase[t%3][t/3], so the outputs of one tap are consecutive. The
	// first keep samples are the history the next output reaches back
	// into; the pending after them do not yet make an output.
	phase   [3][phaseLen]float32
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
	i := d.pending
	if d.odd && len(src) > 0 {
		d.put(i, int16(uint16(d.low)|uint16(src[0])<<8))
		i++
		src = src[1:]
		d.odd = false
	}
	for ; (keep+i)%3 != 0 && i < block && len(src) >= 2; i++ {
		d.put(i, int16(uint16(src[0])|uint16(src[1])<<8))
		src = src[2:]
	}
	// Whole triples, one sample to each phase, while the block has room.
	if triples := min(len(src)/6, (block-i)/3); triples > 0 {
		q := (keep + i) / 3
		p0, p1, p2 := d.phase[0][q:q+triples], d.phase[1][q:q+triples], d.phase[2][q:q+triples]
		in := src[:6*triples]
		for k := range p0 {
			b := in[6*k : 6*k+6]
			p0[k] = float32(int16(uint16(b[0]) | uint16(b[1])<<8))
			p1[k] = float32(int16(uint16(b[2]) | uint16(b[3])<<8))
			p2[k] = float32(int16(uint16(b[4]) | uint16(b[5])<<8))
		}
		i += 3 * triples
		src = src[6*triples:]
	}
	for ; i < block && len(src) >= 2; i++ {
		d.put(i, int16(uint16(src[0])|uint16(src[1])<<8))
		src = src[2:]
	}
	if len(src) == 1 && i < block {
		d.odd, d.low = true, src[0]
		src = src[1:]
	}
	n := i / 3
	var y [block / 3]float32
	outputs(coefficients(), &d.phase, y[:], n)
	for j, v := range y[:n] {
		out[j] = toInt16(v)
	}
	for p := range d.phase {
		copy(d.phase[p][:], d.phase[p][n:])
	}
	d.pending = i - 3*n
	return n, src
}

// put stores the block's sample i in its phase.
func (d *Down3) put(i int, s int16) {
	t := keep + i
	d.phase[t%3][t/3] = float32(s)
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
