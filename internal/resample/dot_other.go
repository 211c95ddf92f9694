//go:build !amd64 || purego

package resample

// outputs writes to y[:n] the filter's outputs over the phases, output j's
// window starting at sample 3j. It may write y past n.
func outputs(k *kernel, ph *[3][phaseLen]float32, y []float32, n int) {
	outputsGo(k, ph, y, n)
}
