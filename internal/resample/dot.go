package resample

// outputsGo writes to y[:n] the filter's outputs over the phases, output j's
// window starting at sample 3j: the portable version of outputs.
func outputsGo(k *kernel, ph *[3][phaseLen]float32, y []float32, n int) {
	for j := range y[:n] {
		y[j] = dot(&k.half, (*[taps / 3]float32)(ph[0][j:]), (*[taps / 3]float32)(ph[1][j:]), (*[taps / 3]float32)(ph[2][j:]))
	}
}

// dot is one output: tap 3q+r meets phase r at q. The taps' symmetry halves
// the multiplications (tap 149-k = 3(49-q)+(2-r) meets phase 2-r at 49-q);
// three sums break the chain of dependent additions, which would otherwise
// set the pace.
func dot(h *[taps / 2]float32, p0, p1, p2 *[taps / 3]float32) float32 {
	const last = taps/3 - 1
	var s0, s1, s2 float32
	for q := range taps / 6 {
		s0 += h[3*q] * (p0[q] + p2[last-q])
		s1 += h[3*q+1] * (p1[q] + p1[last-q])
		s2 += h[3*q+2] * (p2[q] + p0[last-q])
	}
	return (s0 + s1) + s2
}
