package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/otlptest"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/relay/relayload"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// BenchmarkCallCostTracing is tracing's cost on the whole server:
// CALLCOST_CALLS (default 200) concurrent calls of
// CALLCOST_TRACING_SECONDS (default 8) through a server with tracing off,
// then through one exporting to an OTLP/HTTP receiver in this process
// (OTEL_EXPORTER_OTLP_ENDPOINT, the SDK's defaults otherwise), in
// CALLCOST_TRACING_ROUNDS (default 2) pairs, off first in odd rounds and
// on first in even ones, so that neither always runs second. The model's echo comes in turns of
// 1 s (50 frames), so a call has its request spans, its call span, a turn
// span a second and the jobs its end causes. Run by `make bench`:
//
//	go test -run '^$' -bench CallCostTracing -benchtime 1x ./cmd/agentline/
func BenchmarkCallCostTracing(b *testing.B) {
	n := costEnvInt(b, "CALLCOST_CALLS", 200, 2000)
	d := time.Duration(costEnvInt(b, "CALLCOST_TRACING_SECONDS", 8, 300)) * time.Second
	rounds := costEnvInt(b, "CALLCOST_TRACING_ROUNDS", 2, 10)
	for range b.N {
		recv := otlptest.New()
		model := realtimefake.New(costKey)
		model.Echo, model.EchoTurn = true, 50
		load := "load average " + relayload.LoadAverage()
		var cpu [2]float64
		var frames [2]int
		for round := range rounds {
			// Off then on, then on then off: neither comes always second.
			for k := range 2 {
				on := (k == 1) == (round%2 == 0)
				var env []string
				if on {
					env = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL}
				}
				r := tracedCostRun(b, model, n, d, env...)
				cpu[b2i(on)] += r.cpu
				frames[b2i(on)] += r.frames
				b.Logf("round %d, tracing on %v: %d calls of %v: CPU %.2f s (%.2f s with idle), lost %d, frames %d",
					round+1, on, r.calls, r.d, r.cpu, r.raw, r.lost, r.frames)
			}
			load += " " + relayload.LoadAverage()
		}
		model.Close()
		spans := recv.Spans()
		reqs, errs := recv.Requests()
		recv.Close()
		turns := 0
		for _, s := range spans {
			if s.Name == "turn" {
				turns++
			}
		}
		// Per frame relayed: on a loaded machine the callers fall behind
		// their pace by different amounts in each run.
		off, on := cpu[0], cpu[1]
		perOff, perOn := off/float64(frames[0]), on/float64(frames[1])
		b.Logf("off %.2f s, on %.2f s over %d rounds: %+.1f %% CPU per frame with tracing on; %d spans received (%d turns) in %d requests, %d refused",
			off, on, rounds, (perOn/perOff-1)*100, len(spans), turns, reqs, len(errs))
		b.Logf("%s", load)
		b.ReportMetric(off/float64(rounds), "cpu-s-off")
		b.ReportMetric(on/float64(rounds), "cpu-s-on")
		b.ReportMetric((perOn/perOff-1)*100, "tracing-cpu-%")
		b.ReportMetric(float64(len(spans))/float64(rounds), "spans/run")
	}
}

// tracedCostRun runs n calls of d through a server of its own (with a
// carrier fake of its own) started with env, and stops it.
func tracedCostRun(b *testing.B, model *realtimefake.Server, n int, d time.Duration, env ...string) costRun {
	fake := twiliofake.New(twiliofake.Options{})
	defer fake.Close()
	srv := startCostServer(b, fake, model, env...)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	idle := measureIdle(srv.pid)
	r := runCalls(srv.pid, idle, n, d, func(ctx context.Context, i int, stopAt time.Time, st *relayload.Stats) error {
		return carrierCall(ctx, client, fake, srv.url, i, stopAt, st)
	})
	srv.stop(b)
	return r
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
