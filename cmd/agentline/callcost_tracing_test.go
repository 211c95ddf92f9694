package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/otlptest"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/relay/relayload"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// BenchmarkCallCostTracing is tracing's cost on the whole server, measured
// so that the machine's load moves both sides alike: in each of
// CALLCOST_TRACING_ROUNDS (default 5) rounds two fresh servers run at the
// same time, one with tracing off and one exporting to an OTLP/HTTP
// receiver in this process (OTEL_EXPORTER_OTLP_ENDPOINT, the SDK's
// defaults otherwise), and the same callers place CALLCOST_TRACING_CALLS
// (default 200) calls of CALLCOST_TRACING_SECONDS (default 8) on each,
// interleaved: call i reaches both servers within the same instant, which
// one first alternating. The round's figure is on's CPU per relayed frame
// over off's; the median of the rounds is reported. Beside it, figures
// load does not move: bytes and allocations per call (the runtime's own
// counters on each server's /metrics), garbage collections per call, and
// the CPU the collector reports itself (GODEBUG=gctrace=1), which a CPU
// profile charges to the runtime rather than to the code that allocated.
// The model's echo comes in turns of 1 s (50 frames), so a call has its
// request spans, its call span, a turn span a second and the jobs its end
// causes. Run by `make bench`:
//
//	go test -run '^$' -bench CallCostTracing -benchtime 1x ./cmd/agentline/
func BenchmarkCallCostTracing(b *testing.B) {
	n := costEnvInt(b, "CALLCOST_TRACING_CALLS", 200, 2000)
	d := time.Duration(costEnvInt(b, "CALLCOST_TRACING_SECONDS", 8, 300)) * time.Second
	rounds := costEnvInt(b, "CALLCOST_TRACING_ROUNDS", 5, 20)
	for range b.N {
		recv := otlptest.New()
		model := realtimefake.New(costKey)
		model.Echo, model.EchoTurn = true, 50
		load := "load average " + relayload.LoadAverage()
		var ratios, gcShare []float64
		var sum [2]pairedSide
		for round := range rounds {
			r := pairedRound(b, model, recv.URL, n, d, round%2 == 1)
			ratio := (r[1].cpu/float64(r[1].frames))/(r[0].cpu/float64(r[0].frames)) - 1
			ratios = append(ratios, ratio*100)
			gcShare = append(gcShare, (r[1].gcCPU-r[0].gcCPU)/(r[1].cpu-r[0].cpu)*100)
			for k := range 2 {
				sum[k].add(r[k])
				b.Logf("round %d, tracing on %v: %d calls of %v: CPU %.2f s (%.2f s with idle), lost %d, frames %d; per call %.0f kB, %.0f allocs, %.2f GCs, GC CPU %.1f ms",
					round+1, k == 1, n, d, r[k].cpu, r[k].raw, r[k].lost, r[k].frames,
					r[k].bytes/float64(n)/1e3, r[k].allocs/float64(n), r[k].gcs/float64(n), r[k].gcCPU*1e3/float64(n))
			}
			b.Logf("round %d: %+.1f %% CPU per frame with tracing on (load average %s)", round+1, ratio*100, relayload.LoadAverage())
			load += " " + relayload.LoadAverage()
		}
		model.Close()
		spans := recv.Spans()
		reqs, errs := recv.Requests()
		recv.Close()
		med := median(ratios)
		calls := float64(n * rounds)
		off, on := sum[0], sum[1]
		b.Logf("rounds: %s %%; median %+.1f %% CPU per frame with tracing on", fmtFloats(ratios), med)
		b.Logf("per call, off vs on: %.0f vs %.0f kB allocated (%+.1f %%), %.0f vs %.0f allocs (%+.1f %%), %.3f vs %.3f GCs, GC CPU %.1f vs %.1f ms; GC's share of the CPU tracing adds, by round: %s %%",
			off.bytes/calls/1e3, on.bytes/calls/1e3, (on.bytes/off.bytes-1)*100,
			off.allocs/calls, on.allocs/calls, (on.allocs/off.allocs-1)*100,
			off.gcs/calls, on.gcs/calls, off.gcCPU*1e3/calls, on.gcCPU*1e3/calls, fmtFloats(gcShare))
		b.Logf("%d spans received (%.1f a call) in %d requests, %d refused; %s", len(spans), float64(len(spans))/calls, reqs, len(errs), load)
		b.ReportMetric(off.cpu/float64(rounds), "cpu-s-off")
		b.ReportMetric(on.cpu/float64(rounds), "cpu-s-on")
		b.ReportMetric(med, "tracing-cpu-%")
		b.ReportMetric((on.bytes-off.bytes)/calls, "tracing-B/call")
		b.ReportMetric((on.allocs-off.allocs)/calls, "tracing-allocs/call")
		b.ReportMetric(float64(len(spans))/float64(rounds), "spans/run")
	}
}

// pairedSide is one server's figures in a round: its costRun and the
// runtime's counters over the same span of time.
type pairedSide struct {
	costRun
	bytes, allocs, gcs, gcCPU float64
}

func (p *pairedSide) add(q pairedSide) {
	p.cpu += q.cpu
	p.frames += q.frames
	p.bytes += q.bytes
	p.allocs += q.allocs
	p.gcs += q.gcs
	p.gcCPU += q.gcCPU
}

// pairedRound starts a server with tracing off and one with it on, at the
// same time, and runs n calls of d on each at the same time. Index 0 is
// off, 1 is on; onFirst says which of a pair of calls is placed first.
func pairedRound(b *testing.B, model *realtimefake.Server, otlp string, n int, d time.Duration, onFirst bool) [2]pairedSide {
	var fakes [2]*twiliofake.Fake
	var srvs [2]*costServer
	for k := range 2 {
		fakes[k] = twiliofake.New(twiliofake.Options{})
		defer fakes[k].Close()
		env := []string{"GODEBUG=gctrace=1"}
		if k == 1 {
			env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+otlp)
		}
		srvs[k] = startCostServer(b, os.Args[0], fakes[k], model, env...)
		defer srvs[k].stop(b)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * n}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	var idle [2]idleCPU
	var wg sync.WaitGroup
	for k := range 2 {
		wg.Go(func() { idle[k] = measureIdle(srvs[k].pid) })
	}
	wg.Wait()
	var before [2]runtimeCounters
	var gc0 [2]int64
	for k := range 2 {
		before[k] = readRuntimeCounters(b, srvs[k].metrics)
		gc0[k] = srvs[k].gcCPU.Load()
	}
	runs := runPairedCalls([2]int{srvs[0].pid, srvs[1].pid}, idle, n, d, onFirst,
		func(ctx context.Context, k, i int, stopAt time.Time, st *relayload.Stats) error {
			return carrierCall(ctx, client, fakes[k], srvs[k].url, i, stopAt, st)
		})
	var out [2]pairedSide
	for k := range 2 {
		after := readRuntimeCounters(b, srvs[k].metrics)
		out[k] = pairedSide{costRun: runs[k],
			bytes: after.bytes - before[k].bytes, allocs: after.allocs - before[k].allocs, gcs: after.gcs - before[k].gcs,
			gcCPU: float64(srvs[k].gcCPU.Load()-gc0[k]) / 1e6}
	}
	return out
}

// runPairedCalls is runCalls on two servers at once: the i-th caller
// places its call on both, the two started together, and each server's
// CPU is measured from before the first call to its own idle.
func runPairedCalls(pids [2]int, idle [2]idleCPU, n int, d time.Duration, onFirst bool, call func(ctx context.Context, k, i int, stopAt time.Time, st *relayload.Stats) error) [2]costRun {
	ctx, cancel := context.WithTimeout(context.Background(), d+60*time.Second)
	defer cancel()
	var stats [2][]relayload.Stats
	var c0 [2]float64
	t0 := time.Now()
	for k := range 2 {
		stats[k] = make([]relayload.Stats, n)
		c0[k], _ = relayload.ProcCPU(pids[k])
	}
	var wg sync.WaitGroup
	for i := range n {
		order := [2]int{0, 1}
		if (i%2 == 1) != onFirst {
			order = [2]int{1, 0}
		}
		for _, k := range order {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * time.Second / time.Duration(n))
				st := &stats[k][i]
				st.Lat = make([]time.Duration, 0, int(d/(20*time.Millisecond))+64)
				if err := call(ctx, k, i, time.Now().Add(d), st); err != nil {
					st.Failed = true
					b := "off"
					if k == 1 {
						b = "on"
					}
					fmt.Printf("call %d (tracing %s): %v\n", i, b, err)
				}
			})
		}
	}
	wg.Wait()
	var out [2]costRun
	var c1 [2]float64
	var walls [2]time.Duration
	for k := range 2 {
		wg.Go(func() { c1[k] = waitIdle(pids[k], idle[k], 90*time.Second); walls[k] = time.Since(t0) })
	}
	wg.Wait()
	for k := range 2 {
		r := costRun{calls: n, d: d, wall: walls[k], raw: c1[k] - c0[k]}
		r.cpu = r.raw - float64(idle[k])*r.wall.Seconds()
		for _, st := range stats[k] {
			if st.Failed || st.Got < st.Sent*95/100 {
				r.lost++
			}
			r.frames += st.Got
		}
		out[k] = r
	}
	return out
}

// runtimeCounters are the Go runtime's cumulative figures a server shows
// on /metrics (Prometheus' Go collector).
type runtimeCounters struct{ bytes, allocs, gcs float64 }

func readRuntimeCounters(b *testing.B, base string) runtimeCounters {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		b.Fatalf("metrics: %v", err)
	}
	defer res.Body.Close()
	var c runtimeCounters
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			continue
		}
		switch name {
		case "go_memstats_alloc_bytes_total":
			c.bytes = f
		case "go_memstats_mallocs_total":
			c.allocs = f
		case "go_gc_duration_seconds_count":
			c.gcs = f
		}
	}
	return c
}

// gcTraceCPU is the CPU in µs one GODEBUG=gctrace=1 line reports
// ("... 0.045+0.35/1.0/0.50+0.014 ms cpu, ...": stop-the-world phases,
// assist, background and idle marking), 0 for any other line.
func gcTraceCPU(line string) int64 {
	if !strings.HasPrefix(line, "gc ") {
		return 0
	}
	head, _, ok := strings.Cut(line, " ms cpu")
	if !ok {
		return 0
	}
	head = head[strings.LastIndexByte(head, ' ')+1:]
	var ms float64
	for _, f := range strings.FieldsFunc(head, func(r rune) bool { return r == '+' || r == '/' }) {
		v, _ := strconv.ParseFloat(f, 64)
		ms += v
	}
	return int64(ms * 1e3)
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtFloats(v []float64) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprintf("%+.1f", f)
	}
	return strings.Join(parts, ", ")
}
