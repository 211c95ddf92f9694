package resample

import (
	"math"
	"sync"
)

// The low-pass before decimation by 3, as designed and measured against
// sox in down3_sox_test.go and docs/benchmarks.md. A Kaiser-windowed sinc:
// 150 taps (3.1 ms at 24 kHz, group delay 74.5 input samples), cutoff 3625
// Hz, beta 7.3. Its response is flat within 0.5 dB to 3.4 kHz and at least
// 70 dB down from 4 kHz (the new Nyquist frequency) on, so nothing the model
// says above 4 kHz folds back into the call's audible band.
const (
	taps   = 150
	cutoff = 3625.0 / 24000
	beta   = 7.3
)

// kernel is the filter's taps, scaled to unity gain at DC: all of them for
// the vector kernel, and the first half for the portable one, which uses
// their symmetry (h[k] = h[taps-1-k]).
type kernel struct {
	full [taps]float32
	half [taps / 2]float32
}

// coefficients is the kernel, computed once on first use.
var coefficients = sync.OnceValue(func() *kernel {
	h := kaiserLowPass(taps, cutoff, beta)
	k := new(kernel)
	for i, c := range h {
		k.full[i] = float32(c)
	}
	copy(k.half[:], k.full[:])
	return k
})

// kaiserLowPass is the windowed-sinc low-pass of n taps with its cutoff at
// fc (a fraction of the sample rate), normalized to unity gain at DC.
func kaiserLowPass(n int, fc, beta float64) []float64 {
	h := make([]float64, n)
	mid := float64(n-1) / 2
	sum := 0.0
	for i := range h {
		t := float64(i) - mid
		sinc := 2 * fc
		if t != 0 {
			sinc = math.Sin(2*math.Pi*fc*t) / (math.Pi * t)
		}
		r := t / mid
		h[i] = sinc * besselI0(beta*math.Sqrt(1-r*r)) / besselI0(beta)
		sum += h[i]
	}
	for i := range h {
		h[i] /= sum
	}
	return h
}

// besselI0 is the modified Bessel function of the first kind, order 0, by
// its power series (converged well before 40 terms for the betas used).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 40; k++ {
		f := x / 2 / float64(k)
		term *= f * f
		sum += term
	}
	return sum
}
