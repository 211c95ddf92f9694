package resample

// outputsGo writes to y[:n] the filter's outputs over the phases, output j's
// window starting at sample 3j: the portable version of outputs. Four
// outputs at a time share each tap's load and keep four sums going. It
// writes y up to n rounded up to four, every output computed alike
// wherever its four start, so the bytes out never depend on how the input
// was split.
func outputsGo(k *kernel, ph *[3][phaseLen]float32, y []float32, n int) {
	for j := 0; j < n; j += 4 {
		four(&k.full, (*[taps/3 + 3]float32)(ph[0][j:]), (*[taps/3 + 3]float32)(ph[1][j:]), (*[taps/3 + 3]float32)(ph[2][j:]), (*[4]float32)(y[j:]))
	}
}

// four is four consecutive outputs: tap 3q+r meets phase r at q, q+1, q+2
// and q+3.
func four(h *[taps]float32, p0, p1, p2 *[taps/3 + 3]float32, y *[4]float32) {
	var s0, s1, s2, s3 float32
	for q := range taps / 3 {
		c0, c1, c2 := h[3*q], h[3*q+1], h[3*q+2]
		s0 += c0*p0[q] + c1*p1[q] + c2*p2[q]
		s1 += c0*p0[q+1] + c1*p1[q+1] + c2*p2[q+1]
		s2 += c0*p0[q+2] + c1*p1[q+2] + c2*p2[q+2]
		s3 += c0*p0[q+3] + c1*p1[q+3] + c2*p2[q+3]
	}
	y[0], y[1], y[2], y[3] = s0, s1, s2, s3
}
