package resample

import (
	"math"
	"math/cmplx"
	"testing"
)

// Measurements shared by the design test and the comparison with sox, all
// on 16-bit samples before mu-law.

// amplitude is the peak amplitude of the component of x at freq Hz (rate
// fs), by a Hann-windowed single-bin DFT (Goertzel's sum).
func amplitude(x []float64, freq, fs float64) float64 {
	var sum complex128
	var wsum float64
	n := float64(len(x))
	turn := cmplx.Exp(complex(0, -2*math.Pi*freq/fs))
	rot := complex(1, 0)
	for i, v := range x {
		w := 0.5 - 0.5*math.Cos(2*math.Pi*(float64(i)+0.5)/n)
		sum += complex(w*v, 0) * rot
		wsum += w
		rot *= turn
	}
	a := cmplx.Abs(sum) / wsum
	if freq != 0 {
		a *= 2
	}
	return a
}

// sineSNR is the ratio in dB of the power of x's sinusoid at freq Hz
// (fitted by least squares) to the power of everything else in x.
func sineSNR(x []float64, freq, fs float64) float64 {
	var ss, sc, cc, xs, xc float64
	for i, v := range x {
		s, c := math.Sincos(2 * math.Pi * freq * float64(i) / fs)
		ss, sc, cc, xs, xc = ss+s*s, sc+s*c, cc+c*c, xs+v*s, xc+v*c
	}
	det := ss*cc - sc*sc
	a, b := (xs*cc-xc*sc)/det, (xc*ss-xs*sc)/det
	var sig, noise float64
	for i, v := range x {
		s, c := math.Sincos(2 * math.Pi * freq * float64(i) / fs)
		fit := a*s + b*c
		sig += fit * fit
		noise += (v - fit) * (v - fit)
	}
	return 10 * math.Log10(sig/noise)
}

// alias is where a tone of freq Hz lands after sampling at 8 kHz.
func alias(freq float64) float64 {
	f := math.Mod(freq, 8000)
	if f > 4000 {
		f = 8000 - f
	}
	return f
}

func db(ratio float64) float64 { return 20 * math.Log10(ratio) }

// response is the filter's gain in dB at freq Hz (at 24 kHz).
func response(h []float64, freq float64) float64 {
	var sum complex128
	for k, c := range h {
		sum += complex(c, 0) * cmplx.Exp(complex(0, -2*math.Pi*freq*float64(k)/24000))
	}
	return db(cmplx.Abs(sum))
}

// The design as the filter runs it (float32 taps): flat within 0.5 dB to
// 3.4 kHz, at least 70 dB down from 4 kHz to 12 kHz.
func TestFilterDesign(t *testing.T) {
	k := coefficients()
	h := make([]float64, taps)
	for i, c := range k.full[:taps] {
		h[i] = float64(c)
		if i < taps/2 && (k.half[i] != c || k.full[taps-1-i] != c) {
			t.Fatalf("tap %d: half %v, full %v and %v: not symmetric", i, k.half[i], c, k.full[taps-1-i])
		}
	}

	lo, hi := math.Inf(1), math.Inf(-1)
	for f := 0.0; f <= 3400; f += 10 {
		g := response(h, f)
		lo, hi = min(lo, g), max(hi, g)
	}
	worst := math.Inf(-1)
	for f := 4000.0; f <= 12000; f += 5 {
		worst = max(worst, response(h, f))
	}
	t.Logf("%d taps: passband 0-3400 Hz within %.2f dB (%+.3f..%+.3f), stopband from 4 kHz %.1f dB, -3 dB at about %.0f Hz",
		taps, hi-lo, lo, hi, worst, minus3dB(h))
	if hi-lo > 0.5 {
		t.Errorf("passband ripple %.2f dB, want <= 0.5", hi-lo)
	}
	if worst > -70 {
		t.Errorf("stopband %.1f dB, want <= -70", worst)
	}
}

func minus3dB(h []float64) float64 {
	f := 3000.0
	for response(h, f) > -3 && f < 4000 {
		f += 5
	}
	return f
}
