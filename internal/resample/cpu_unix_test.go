//go:build unix

package resample

import (
	"syscall"
	"testing"
	"time"
)

// cpuClock is the process's CPU time so far (user and system).
func cpuClock() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per operation since start to a benchmark's
// figures: on a shared machine ns/op counts the time other processes had
// the core, cpu-ns/op does not.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cpuClock()-start)/float64(b.N), "cpu-ns/op")
	}
}
