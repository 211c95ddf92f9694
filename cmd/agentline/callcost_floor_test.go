package main

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/relay/relayload"
)

// BenchmarkCallCostFloor is the whole server against the copy-only
// pass-through, measured so that the machine's load moves both alike: in
// each of CALLCOST_FLOOR_ROUNDS (default 3) rounds the server (warmed up,
// its calls carrier-shaped: webhooks, admission, records, the end and its
// jobs) and the floor (relayload.PassThrough in a child of its own: two
// sockets, a goroutine per direction copying each message) take
// CALLCOST_CALLS (default 200) calls of CALLCOST_FLOOR_SECONDS (default 24)
// at the same time, from this process, through the same echoing model
// fake. A round's figure is the server's CPU over the floor's, its idle
// rate taken off and with it; the median of the rounds is reported.
// BenchmarkCallCost runs the two one after the other, where the machine
// can change between them by more than the difference. Run by `make bench`:
//
//	go test -run '^$' -bench CallCostFloor -benchtime 1x ./cmd/agentline/
func BenchmarkCallCostFloor(b *testing.B) {
	n := costEnvInt(b, "CALLCOST_CALLS", 200, 2000)
	d := time.Duration(costEnvInt(b, "CALLCOST_FLOOR_SECONDS", 24, 300)) * time.Second
	rounds := costEnvInt(b, "CALLCOST_FLOOR_ROUNDS", 3, 20)
	for range b.N {
		load := "load average " + relayload.LoadAverage()
		rig := startCarrierRig(b, n, os.Args[0])
		floor := startFloor(b, rig.model)
		var ratios, withIdle []float64
		for round := range rounds {
			var srv, fl costRun
			var wg sync.WaitGroup
			wg.Go(func() { srv = rig.run(n, d) })
			wg.Go(func() { fl = floor.run(n, d) })
			wg.Wait()
			ratios = append(ratios, srv.cpu/fl.cpu)
			withIdle = append(withIdle, srv.raw/fl.raw)
			load += " " + relayload.LoadAverage()
			b.Logf("round %d: server %.2f s (%.2f s with idle), %d frames, lost %d, p99 %v; floor %.2f s, %d frames, lost %d, p99 %v: %.3fx (%.3fx with idle)",
				round+1, srv.cpu, srv.raw, srv.frames, srv.lost, srv.p99, fl.cpu, fl.frames, fl.lost, fl.p99, ratios[round], withIdle[round])
		}
		floor.stop()
		rig.srv.stop(b)
		rig.close()
		sorted := slices.Sorted(slices.Values(ratios))
		b.Logf("server over floor by round: %.3f; median %.3fx (%.3fx with the server's idle %.1f ms/s); %s",
			ratios, median(ratios), median(withIdle), float64(rig.idle)*1000, load)
		b.ReportMetric(median(ratios), "x-floor")
		b.ReportMetric(median(withIdle), "x-floor-with-idle")
		b.ReportMetric(sorted[len(sorted)-1], "max-x-floor")
	}
}

// floorChild is the copy-only pass-through in a child process, with its
// idle rate.
type floorChild struct {
	child *relayload.Child
	url   string
	idle  idleCPU
}

// startFloor starts the pass-through in front of model.
func startFloor(b *testing.B, model *realtimefake.Server) *floorChild {
	cmd := costCommand("RELAYLOAD_MODE=floor", "RELAYLOAD_MODEL_WS="+realtimefake.WSURL(model.URL(), "gpt-realtime"))
	child, err := relayload.Start(cmd)
	if err != nil {
		b.Fatal(err)
	}
	return &floorChild{child: child, url: "ws://" + child.Addr + "/", idle: measureIdle(child.Pid)}
}

// run places n calls of d on the pass-through and measures them.
func (f *floorChild) run(n int, d time.Duration) costRun {
	return runCalls(f.child.Pid, f.idle, n, d, func(ctx context.Context, i int, stopAt time.Time, st *relayload.Stats) error {
		return relayload.Call(ctx, relayload.Stream{URL: f.url, N: i}, time.Now(), stopAt, st)
	})
}

func (f *floorChild) stop() { f.child.Stop() }
