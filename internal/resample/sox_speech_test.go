package resample

import (
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"testing"
)

// sweepAgainstSox runs a log sweep from 50 Hz to 11.5 kHz through both and
// logs, per 20 ms window of output, the gain while the sweep is in the
// passband (its spread) and the worst level while it is in the stopband
// (where all that comes out is aliasing).
func sweepAgainstSox(t *testing.T) {
	const seconds, f0, f1 = 4.0, 50.0, 11500.0
	n := int(seconds * 24000)
	s := make([]int16, n)
	k := math.Log(f1 / f0)
	for i := range s {
		tt := float64(i) / 24000
		phase := 2 * math.Pi * f0 * seconds / k * (math.Exp(tt/seconds*k) - 1)
		s[i] = int16(math.Round(tonePeak * math.Sin(phase)))
	}
	in := pcm16(s)
	ours, sox := sweepFigures(oursDown3(in)), sweepFigures(soxDown3(t, in))
	t.Logf("%-28s %10.2f %10.2f", "sweep 200-3300 Hz spread (dB)", ours[0], sox[0])
	t.Logf("%-28s %10s %10s", "sweep worst >= 4.3 kHz (dB)", shown(ours[1]), shown(sox[1]))
}

// sweepFigures is the passband spread and the worst stopband level of a
// sweep's output, window by window (20 ms at 8 kHz), relative to the input.
func sweepFigures(x []float64) [2]float64 {
	const seconds, f0, f1, win = 4.0, 50.0, 11500.0, 160
	lo, hi, stop := math.Inf(1), math.Inf(-1), math.Inf(-1)
	for start := 0; start+win <= len(x); start += win {
		mid := (float64(start) + win/2) / 8000
		freq := f0 * math.Exp(mid/seconds*math.Log(f1/f0))
		var e float64
		for _, v := range x[start : start+win] {
			e += v * v
		}
		level := db(math.Sqrt(e/win) / (tonePeak / math.Sqrt2))
		switch {
		case freq >= 200 && freq <= 3300:
			lo, hi = min(lo, level), max(hi, level)
		case freq >= 4300 && freq <= 11000:
			stop = max(stop, level)
		}
	}
	return [2]float64{hi - lo, stop}
}

// speechAgainstSox runs espeak-ng's speech (22.05 kHz, brought to 24 kHz
// by sox) through both and logs how far apart their long-term spectra
// are from 100 Hz to 3.4 kHz (ours relative to sox's), and their levels.
func speechAgainstSox(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_SOX") == "1" {
			t.Fatalf("espeak-ng is required with sox (AGENTLINE_REQUIRE_SOX=1): %v", err)
		}
		t.Log("speech: espeak-ng not installed, skipped")
		return
	}
	wav := run(t, nil, "espeak-ng", "-v", "en", "--stdout",
		"Thanks for calling. Your order shipped on Tuesday and should arrive by Friday afternoon.")
	args := append([]string{"-D", "-t", "wav", "-"}, raw("24000")...)
	pcm := run(t, wav, "sox", append(args, "-", "rate", "-v", "24000")...)
	ours, sox := oursDown3(pcm), soxDown3(t, pcm)
	so, ss := spectrum(ours), spectrum(sox)
	// Bands of 300 Hz: single bins of a changing signal differ by tenths
	// of a dB with how the frames fall, whatever the filters.
	worst, at := 0.0, 0.0
	for lo := 100.0; lo < 3400; lo += 300 {
		var po, ps float64
		for bin := range so {
			if f := float64(bin) * 8000 / specSize; f >= lo && f < lo+300 {
				po, ps = po+so[bin], ps+ss[bin]
			}
		}
		if d := 10 * math.Log10(po/ps); math.Abs(d) > math.Abs(worst) {
			worst, at = d, lo
		}
	}
	t.Logf("%-28s %+9.2f %10s", "speech, worst 300 Hz band", worst, "0")
	t.Logf("%-28s %10s", "  ... in band (Hz)", fmt.Sprintf("%.0f-%.0f", at, at+300))
	t.Logf("%-28s %+9.2f %+9.2f", "speech level (dBFS rms)", rms(ours), rms(sox))
}

const specSize = 256

// spectrum is x's long-term power spectrum: the mean of Hann-windowed DFTs
// of half-overlapping frames, bins 0 to specSize/2.
func spectrum(x []float64) []float64 {
	var window [specSize]float64
	var turns [specSize]complex128
	for i := range window {
		window[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/specSize)
		turns[i] = cmplx.Exp(complex(0, -2*math.Pi*float64(i)/specSize))
	}
	p := make([]float64, specSize/2+1)
	var frame [specSize]float64
	for start := 0; start+specSize <= len(x); start += specSize / 2 {
		for i, v := range x[start : start+specSize] {
			frame[i] = window[i] * v
		}
		for bin := range p {
			var sum complex128
			for i, v := range frame {
				sum += complex(v, 0) * turns[bin*i%specSize]
			}
			p[bin] += real(sum)*real(sum) + imag(sum)*imag(sum)
		}
	}
	return p
}

func rms(x []float64) float64 {
	var e float64
	for _, v := range x {
		e += v * v
	}
	return db(math.Sqrt(e/float64(len(x))) / 32768)
}
