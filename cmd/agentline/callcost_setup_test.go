package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/telephony/relay/relayload"
)

// BenchmarkCallCostSetup is what a call's setup and end cost the whole
// server, measured without frames: CALLCOST_CALLS (default 200) concurrent
// calls as the carrier places them (the signed webhook, the stream's
// upgrade, connected and start, no media, stop 300 ms later, the signed
// completed status callback), in CALLCOST_SETUP_ROUNDS (default 5) rounds
// on one server. Each round's CPU is counted from before its first call
// until the server is idle again (the end's jobs run), its idle rate taken
// off. With no frames, no frame cost is subtracted, so the machine's load
// moves the figure only through the CPU the work itself takes: each
// round's figure is reported, and the median and the spread of them.
//
//	go test -run '^$' -bench CallCostSetup -benchtime 1x ./cmd/agentline/
//
// With CALLCOST_SETUP_AGAINST naming another build of this test binary
// (from other code), the rounds run on both side by side (setupAgainst).
func BenchmarkCallCostSetup(b *testing.B) {
	n := costEnvInt(b, "CALLCOST_CALLS", 200, 2000)
	rounds := costEnvInt(b, "CALLCOST_SETUP_ROUNDS", 5, 50)
	against := os.Getenv("CALLCOST_SETUP_AGAINST")
	for range b.N {
		if against != "" {
			setupAgainst(b, n, rounds, against)
			continue
		}
		load := []string{relayload.LoadAverage()}
		rig := startCarrierRig(b, n, os.Args[0])
		idle := rig.idle
		var perCall []float64
		lost := 0
		for round := range rounds {
			r := rig.run(n, 0)
			load = append(load, relayload.LoadAverage())
			ms := r.cpu / float64(r.calls) * 1000
			perCall = append(perCall, ms)
			lost += r.lost
			b.Logf("round %d: %d calls, CPU %.3f s (%.3f s with idle) over %v: %.2f ms a call (%.2f with idle), lost %d; load %s",
				round+1, r.calls, r.cpu, r.raw, r.wall.Round(100*time.Millisecond), ms, r.raw/float64(r.calls)*1000, r.lost, load[len(load)-1])
		}
		after := measureIdle(rig.srv.pid)
		rig.srv.stop(b)
		rig.close()
		sorted := slices.Sorted(slices.Values(perCall))
		med := median(perCall)
		b.Logf("per call: median %.2f ms, %.2f to %.2f ms over %d rounds; idle %.1f ms/s before, %.1f after; load average %s",
			med, sorted[0], sorted[len(sorted)-1], rounds, float64(idle)*1000, float64(after)*1000, strings.Join(load, " | "))
		b.ReportMetric(med, "setup-ms/call")
		b.ReportMetric(sorted[0], "min-ms/call")
		b.ReportMetric(sorted[len(sorted)-1], "max-ms/call")
		b.ReportMetric(float64(idle)*1000, "idle-ms/s")
		b.ReportMetric(float64(lost), "lost-calls")
		if lost > 0 {
			b.Logf("%d calls lost: their rounds count less work than %d calls", lost, n)
		}
	}
}

// setupAgainst runs the setup rounds on this build and on another one
// (against) side by side: a round on each in turn, the order swapped every
// round, so that the machine's drift, which moves the figure more than most
// changes to the code do, falls on both alike. It reports each side's
// median per call and the median of the rounds' ratios, this build over
// the other.
func setupAgainst(b *testing.B, n, rounds int, against string) {
	rigs := [2]*carrierRig{startCarrierRig(b, n, os.Args[0]), startCarrierRig(b, n, against)}
	var perCall [2][]float64
	var ratios []float64
	var load []string
	lost := 0
	for round := range rounds {
		var ms [2]float64
		for j := range 2 {
			k := (j + round) % 2
			r := rigs[k].run(n, 0)
			ms[k] = r.cpu / float64(r.calls) * 1000
			perCall[k] = append(perCall[k], ms[k])
			lost += r.lost
		}
		ratios = append(ratios, ms[0]/ms[1])
		load = append(load, relayload.LoadAverage())
	}
	for _, r := range rigs {
		r.srv.stop(b)
		r.close()
	}
	// One line: the testing package keeps only a benchmark's first lines.
	b.Logf("per call: this build median %.2f ms, the other %.2f ms; median ratio %.3fx over %d rounds; %d calls lost; "+
		"by round, this build %.2f, the other %.2f, ratios %.3f; load average after each %s",
		median(perCall[0]), median(perCall[1]), median(ratios), rounds, lost, perCall[0], perCall[1], ratios, strings.Join(load, " | "))
	b.ReportMetric(median(perCall[0]), "setup-ms/call")
	b.ReportMetric(median(perCall[1]), "against-ms/call")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(float64(lost), "lost-calls")
}
