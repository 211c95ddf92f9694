//go:build !unix

package resample

import (
	"testing"
	"time"
)

func cpuClock() time.Duration { return 0 }

func reportCPU(*testing.B, time.Duration) {}
