package relayload_test

import (
	"crypto/sha256"
	"os"
	"testing"

	"github.com/agentline/agentline/internal/telephony/relay/relayload"
)

// The precise count of a process's CPU grows with the work it does and
// agrees with the kernel's tick count, to its 10 ms.
func TestProcCPUPrecise(t *testing.T) {
	pid := os.Getpid()
	p0, err := relayload.ProcCPUPrecise(pid)
	if err != nil {
		t.Fatal(err)
	}
	t0, _ := relayload.ProcCPU(pid)
	sum := sha256.Sum256(nil)
	for p1 := p0; p1-p0 < 0.2; p1, _ = relayload.ProcCPUPrecise(pid) {
		for range 10000 {
			sum = sha256.Sum256(sum[:])
		}
	}
	p1, _ := relayload.ProcCPUPrecise(pid)
	t1, _ := relayload.ProcCPU(pid)
	if d, ticks := p1-p0, t1-t0; d < 0.2 || ticks < d-0.05 || ticks > d+0.05 {
		t.Fatalf("precise %.3f s, ticks %.3f s over the same work", d, ticks)
	}
}
