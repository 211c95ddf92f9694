//go:build amd64 && !purego

package resample

import "golang.org/x/sys/cpu"

// vector says whether the CPU has AVX2 and FMA (and the OS saves their
// registers), which the assembly needs. The tests turn it off to check the
// portable version on the same machine.
var vector = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// group is how many outputs the assembly computes at once: four vectors of
// eight, which with three phases keeps twelve independent sums going.
const group = 32

// outputs writes to y[:n] the filter's outputs over the phases, output j's
// window starting at sample 3j. It may write y past n, up to n rounded up to
// a group: every output is computed alike wherever its group starts, so the
// bytes out never depend on how the input was split.
func outputs(k *kernel, ph *[3][phaseLen]float32, y []float32, n int) {
	if !vector {
		outputsGo(k, ph, y, n)
		return
	}
	groups := (n + group - 1) / group
	if groups == 0 {
		return
	}
	// The assembly reads each phase to the last group's last window and
	// writes whole groups.
	_ = ph[0][groups*group+taps/3-2]
	_ = y[groups*group-1]
	dotAVX2(&k.full, &ph[0][0], &ph[1][0], &ph[2][0], &y[0], groups)
}

// dotAVX2 computes groups*32 outputs: y[j] is the sum over q < 50 and
// r < 3 of h[3q+r]*p_r[j+q].
//
//go:noescape
func dotAVX2(h *[taps]float32, p0, p1, p2 *float32, y *float32, groups int)
