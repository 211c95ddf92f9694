package resample

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"testing"
	"time"
)

// The conversion measured against sox's very-high-quality rate effect on
// the same input: tones in the passband and the stopband, a log sweep, and
// speech from espeak-ng when it is installed. The figures are logged as a
// table (go test -v -run TestAgainstSox ./internal/resample/); the
// assertions are the stated thresholds, on our output before mu-law.

const (
	toneSeconds = 1.0
	tonePeak    = 29205.0 // -1 dBFS
	settle      = 200     // output samples dropped at each end (filter fill)
)

// requireSox skips the test when sox is not installed, or fails it when
// AGENTLINE_REQUIRE_SOX=1 says it must be (as CI does).
func requireSox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sox"); err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_SOX") == "1" {
			t.Fatalf("sox is required (AGENTLINE_REQUIRE_SOX=1): %v", err)
		}
		t.Skip("sox not installed: the comparison with sox is skipped")
	}
}

// run runs a command with stdin and returns its stdout.
func run(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, errb.String())
	}
	return out.Bytes()
}

// raw is sox's description of headerless 16-bit little-endian mono PCM.
func raw(rate string) []string {
	return []string{"-t", "raw", "-r", rate, "-e", "signed", "-b", "16", "-c", "1", "-L"}
}

// soxDown3 is sox's conversion of 24 kHz PCM to 8 kHz, undithered so the
// figures are sox's filter alone.
func soxDown3(t *testing.T, pcm []byte) []float64 {
	args := append([]string{"-D"}, raw("24000")...)
	args = append(args, "-")
	args = append(args, raw("8000")...)
	args = append(args, "-", "rate", "-v", "8000")
	return floats(run(t, pcm, "sox", args...))
}

// oursDown3 is Down3's 16-bit output for the same input.
func oursDown3(pcm []byte) []float64 {
	var d Down3
	out := d.appendPCM(nil, pcm)
	x := make([]float64, len(out))
	for i, s := range out {
		x[i] = float64(s)
	}
	return x
}

func floats(pcm []byte) []float64 {
	x := make([]float64, len(pcm)/2)
	for i := range x {
		x[i] = float64(int16(uint16(pcm[2*i]) | uint16(pcm[2*i+1])<<8))
	}
	return x
}

// steady drops the ends, where the filters fill and empty.
func steady(x []float64) []float64 { return x[settle : len(x)-settle] }

func sine(freq float64, phase float64) []byte {
	n := int(toneSeconds * 24000)
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(math.Round(tonePeak * math.Sin(2*math.Pi*freq*float64(i)/24000+phase)))
	}
	return pcm16(s)
}

// toneLevel is the level in dB, relative to the input's, at which a tone
// of freq Hz comes out (at its alias when it is above 4 kHz), by ours and
// by sox. A tone whose alias is DC is measured in sine and cosine phase,
// since sampling alone decides how much of it survives in one phase.
func toneLevel(t *testing.T, freq float64) (ours, sox float64) {
	phases := []float64{0}
	if alias(freq) == 0 {
		phases = []float64{0, math.Pi / 2}
	}
	var o2, s2 float64
	for _, p := range phases {
		in := sine(freq, p)
		o := amplitude(steady(oursDown3(in)), alias(freq), 8000)
		s := amplitude(steady(soxDown3(t, in)), alias(freq), 8000)
		o2, s2 = o2+o*o, s2+s*s
	}
	return db(math.Sqrt(o2) / tonePeak), db(math.Sqrt(s2) / tonePeak)
}

// floor is the quietest alias a 16-bit output can show: one LSB against the
// tone's peak. Both outputs are rounded to 16 bits without dither, so an
// alias under half an LSB comes out as silence (sox's, above all: its
// stopband is far deeper than 16 bits); figures below it are shown as
// "<floor", and the comparison with sox is made against the floor then.
var floor = db(1 / tonePeak)

func shown(level float64) string {
	if level < floor {
		return fmt.Sprintf("<%.1f", floor)
	}
	return fmt.Sprintf("%+.1f", level)
}

func TestAgainstSox(t *testing.T) {
	requireSox(t)
	t.Logf("%-28s %10s %10s", "measure", "ours", "sox")
	refOurs, refSox := toneLevel(t, 1000)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range []float64{300, 1000, 2000, 3000, 3400} {
		o, s := toneLevel(t, f)
		lo, hi = min(lo, o), max(hi, o)
		t.Logf("%-28s %+9.2f %+9.2f", fmt.Sprintf("gain at %.0f Hz (dB)", f), o, s)
	}
	t.Logf("%-28s %10.2f", "passband flatness (dB)", hi-lo)
	if hi-lo > 0.5 {
		t.Errorf("passband 300-3400 Hz varies by %.2f dB, want <= 0.5", hi-lo)
	}
	for _, f := range []float64{4500, 5000, 6000, 8000, 10000, 11500} {
		o, s := toneLevel(t, f)
		o, s = o-refOurs, s-refSox
		t.Logf("%-28s %10s %10s", fmt.Sprintf("%.1f kHz alias at %.1f kHz (dB)", f/1000, alias(f)/1000), shown(o), shown(s))
		if o > -60 {
			t.Errorf("%.0f Hz: alias at %.1f dB, want <= -60", f, o)
		}
		if o > max(s, floor)+10 {
			t.Errorf("%.0f Hz: alias at %.1f dB, more than 10 dB worse than sox's %s", f, o, shown(s))
		}
	}
	// 997 Hz rather than 1000: a tone whose period is a whole number of
	// samples (8 at 8 kHz) rounds the same way every period, which makes
	// the rounding error harmonics of the tone and the figure luck.
	in := sine(997, 0)
	o, s := sineSNR(steady(oursDown3(in)), 997, 8000), sineSNR(steady(soxDown3(t, in)), 997, 8000)
	t.Logf("%-28s %9.1f %9.1f", "SNR at 997 Hz, -1 dBFS (dB)", o, s)
	if o < 60 {
		t.Errorf("997 Hz SNR %.1f dB, want >= 60", o)
	}
	sweepAgainstSox(t)
	speechAgainstSox(t)
}
