//go:build unix

package webhooks_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the test process has used so far (user and
// system, every goroutine): a benchmark's cost that other processes on a
// loaded machine do not inflate the way they inflate wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
