package relay_test

// The relay load run: N concurrent simulated calls of 20 ms frames through a
// relay running in a child process, against a fake realtime model that
// echoes the audio back, measuring per-frame round-trip latency, the relay
// process's CPU and memory, and lost calls. The same run is made against a
// minimal pass-through relay (the same two sockets, nothing else) as the
// floor. Run with `make bench`:
//
//	go test -run '^$' -bench BenchmarkRelayLoad -benchtime 1x ./internal/telephony/relay/

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline/internal/provider/geminilivefake"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/relay"
	"github.com/agentline/agentline/internal/telephony/relay/relayload"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv("RELAYLOAD_MODE"); mode != "" {
		if err := serveRelay(mode, os.Getenv("RELAYLOAD_MODEL")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveRelay runs in the child process: a relay server on loopback that
// prints its address and serves until stdin closes (relayload.Serve).
func serveRelay(mode, modelURL string) error {
	modelWS := realtimefake.WSURL(modelURL, "gpt-realtime")
	if mode != "agentline" && mode != "recording" && mode != "gemini" {
		return relayload.Serve(relayload.PassThroughHandler(modelWS, apiKey, mode == "marks"))
	}
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "frame_seconds", Buckets: prometheus.ExponentialBuckets(0.00005, 2, 14)})
	recordings, err := loadRecordingsFor(mode)
	if err != nil {
		return err
	}
	dialOpts := &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + apiKey}}}
	return relayload.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		carrier, err := relay.Accept(w, r, nil)
		if err != nil {
			return
		}
		url := modelWS
		if mode == "gemini" {
			url = strings.Replace(modelURL, "http", "ws", 1) + geminilivefake.PathLive
			dialOpts = &websocket.DialOptions{HTTPHeader: http.Header{"x-goog-api-key": {apiKey}}}
		}
		model, _, err := relay.Dial(ctx, url, dialOpts)
		if err != nil {
			carrier.CloseNow()
			return
		}
		var start struct {
			Start struct {
				StreamSID string `json:"streamSid"`
			} `json:"start"`
		}
		for range 2 { // connected, start
			_, msg, err := carrier.Read(ctx)
			if err != nil {
				return
			}
			json.Unmarshal(msg, &start)
		}
		opts := relay.Options{
			StreamSID:     start.Start.StreamSID,
			SessionUpdate: []byte(`{"type":"session.update","session":{"type":"realtime","instructions":"You are a helpful agent.","audio":{"input":{"format":{"type":"audio/pcmu"},"turn_detection":{"type":"server_vad"}},"output":{"format":{"type":"audio/pcmu"},"voice":"marin"}}}}`),
			OnEvent:       func(relay.Event) {},
			FrameLatency:  latency,
		}
		if mode == "gemini" {
			setup := []byte(`{"setup":{"model":"models/gemini-live","generationConfig":{"responseModalities":["AUDIO"]},"systemInstruction":{"parts":[{"text":"You are a helpful agent."}]}}}`)
			opts.Gemini = &relay.GeminiOptions{Setup: func(string) []byte { return setup }}
		}
		rec := recordings.begin()
		if rec != nil {
			opts.Recorder = rec
		}
		relay.New(carrier, model, opts).Run(context.Background())
		recordings.finish(rec)
	}))
}

type loadResult struct {
	mode            string
	calls, lost     int
	frames          int
	p50, p99, max   time.Duration
	cpuPerSec       float64 // CPU seconds per wall second of the relay process
	rssMB, peakMB   float64
	idleMB          float64   // resident idleWait after the last call ended
	idleSeries      []float64 // resident every 5 s after the last call ended, up to idleWait
	writes, reads   int64     // write and read syscalls of the relay process in the window
	durationSeconds float64
}

// idleWait is how long after the load the relay's resident memory is read
// again, to see what it returns to the OS once idle: 5 s unless
// RELAYLOAD_IDLE_SECONDS says otherwise (60 for the idle-memory target).
var idleWait = 5 * time.Second

// writesPerFrame is the relay's write syscalls per frame that made the
// whole round trip (two messages relayed: caller->model, model->caller).
func (r loadResult) writesPerFrame() float64 {
	if r.frames == 0 {
		return 0
	}
	return float64(r.writes) / float64(r.frames)
}

// readsPerFrame is the same for read syscalls.
func (r loadResult) readsPerFrame() float64 {
	if r.frames == 0 {
		return 0
	}
	return float64(r.reads) / float64(r.frames)
}

// cpuPerFrame is the relay's CPU microseconds per round-tripped frame: on a
// machine too busy for the load generator to reach its pace, relays move
// different numbers of frames, and this compares them fairly.
func (r loadResult) cpuPerFrame() float64 {
	if r.frames == 0 {
		return 0
	}
	return r.cpuPerSec * r.durationSeconds * 1e6 / float64(r.frames)
}

// runLoad runs calls concurrent calls for d through a relay child of mode:
// "floor" and "agentline" are this test binary, "node" runs nodeScript.
func runLoad(t testing.TB, mode string, calls int, d time.Duration, nodeScript string) loadResult {
	fake := realtimefake.New(apiKey)
	fake.Echo = true
	defer fake.Close()
	modelURL := fake.URL()
	if mode == "gemini" {
		// The Live fake echoes each caller frame as 24 kHz PCM, which the
		// relay resamples back: a frame's bytes do not survive the filter,
		// so its callers count frames and measure no latency.
		live := geminilivefake.New(apiKey)
		live.Echo = true
		defer live.Close()
		modelURL = live.URL()
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RELAYLOAD_MODE="+mode, "RELAYLOAD_MODEL="+modelURL, "GOMAXPROCS=2", "RELAYLOAD_RECDIR="+t.TempDir())
	if v := os.Getenv("RELAYLOAD_GOMEMLIMIT"); v != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+v) // the relay child's only
	}
	if mode == "node" {
		cmd = exec.Command("node", nodeScript)
		cmd.Env = append(os.Environ(), "RELAYLOAD_MODEL_WS="+realtimefake.WSURL(fake.URL(), "gpt-realtime"), "RELAYLOAD_KEY="+apiKey)
	}
	child, err := relayload.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer child.Stop()
	url := "ws://" + child.Addr

	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	const warmup = 2 * time.Second
	stats := make([]relayload.Stats, calls)
	measureFrom := time.Now().Add(warmup + time.Second) // calls start over the first second
	stopAt := measureFrom.Add(d)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * time.Second / time.Duration(calls))
			st := &stats[i]
			st.Lat = make([]time.Duration, 0, int(d/(20*time.Millisecond))+64)
			if err := relayload.Call(ctx, relayload.Stream{URL: url, N: i, Untimed: mode == "gemini"}, measureFrom, stopAt, st); err != nil {
				st.Failed = true
			}
		}()
	}
	time.Sleep(time.Until(measureFrom))
	cpu0, _ := relayload.ProcCPU(child.Pid)
	r0, w0 := relayload.ProcIO(child.Pid)
	time.Sleep(time.Until(stopAt))
	cpu1, _ := relayload.ProcCPU(child.Pid)
	r1, w1 := relayload.ProcIO(child.Pid)
	rss, peak := relayload.ProcMem(child.Pid)
	wg.Wait()
	// The calls have ended: what does the process keep?
	var series []float64
	for waited := time.Duration(0); waited < idleWait; {
		step := min(5*time.Second, idleWait-waited)
		time.Sleep(step)
		waited += step
		m, _ := relayload.ProcMem(child.Pid)
		series = append(series, m)
	}
	idle := series[len(series)-1]

	res := loadResult{mode: mode, calls: calls, durationSeconds: d.Seconds(), rssMB: rss, peakMB: peak, idleMB: idle, idleSeries: series}
	res.cpuPerSec = (cpu1 - cpu0) / d.Seconds()
	res.writes, res.reads = w1-w0, r1-r0
	var all []time.Duration
	for _, st := range stats {
		if st.Failed || st.Got < st.Sent*95/100 {
			res.lost++
		}
		res.frames += st.Got
		all = append(all, st.Lat...)
	}
	slices.Sort(all)
	if len(all) > 0 {
		res.p50, res.p99, res.max = all[len(all)/2], all[len(all)*99/100], all[len(all)-1]
	}
	return res
}

// BenchmarkRelayLoad runs the load at 100, 200 and 400 concurrent calls
// (RELAYLOAD_CALLS overrides, e.g. "200,1000") through the floor (each
// message copied once), the marks pass-through (the floor plus a mark
// message per model delta, one write each), agentline's relay, and
// agentline's relay recording every call (both sides, as the echoing model
// answers every frame: a stereo WAV per call, stored in a directory when
// the call ends), and agentline's relay to a Gemini Live model (each frame
// converted to PCM, echoed at 24 kHz and resampled back; frames counted,
// latency not measured), in that order, RELAYLOAD_SECONDS long each (default 10). Besides CPU, latency and
// memory it reports the relay process's write syscalls per round-tripped
// frame and its resident memory idleWait after the calls ended
// (RELAYLOAD_IDLE_SECONDS, default 5). RELAYLOAD_MODES picks relays (e.g.
// "agentline"); RELAYLOAD_GOMEMLIMIT sets GOMEMLIMIT in the relay child. With
// RELAYLOAD_NODE=1 a Node.js pass-through relay (ws from the npm registry,
// installed into a temp dir) runs the same load too, for its memory.
func BenchmarkRelayLoad(b *testing.B) {
	counts := []int{100, 200, 400}
	if v := os.Getenv("RELAYLOAD_CALLS"); v != "" {
		counts = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 || n > 2000 {
				b.Fatalf("RELAYLOAD_CALLS: bad count %q (1..2000)", f)
			}
			counts = append(counts, n)
		}
	}
	d := 10 * time.Second
	if v := os.Getenv("RELAYLOAD_SECONDS"); v != "" {
		s, err := strconv.Atoi(v)
		if err != nil || s < 1 || s > 300 {
			b.Fatal("RELAYLOAD_SECONDS: 1..300")
		}
		d = time.Duration(s) * time.Second
	}
	if v := os.Getenv("RELAYLOAD_IDLE_SECONDS"); v != "" {
		s, err := strconv.Atoi(v)
		if err != nil || s < 1 || s > 300 {
			b.Fatal("RELAYLOAD_IDLE_SECONDS: 1..300")
		}
		idleWait = time.Duration(s) * time.Second
	}
	all := []string{"floor", "marks", "agentline", "recording", "gemini"}
	modes, nodeScript := all, ""
	if v := os.Getenv("RELAYLOAD_MODES"); v != "" {
		modes = nil
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); !slices.Contains(all, m) {
				b.Fatalf("RELAYLOAD_MODES: unknown relay %q (%s)", m, strings.Join(all, ", "))
			}
			modes = append(modes, m)
		}
	}
	if os.Getenv("RELAYLOAD_NODE") == "1" {
		nodeScript = installNodeRelay(b)
		modes = append(modes, "node")
	}
	for _, n := range counts {
		results := map[string]loadResult{}
		defer func() { logRatios(b, n, results) }()
		for _, mode := range modes {
			b.Run(fmt.Sprintf("%s/calls=%d", mode, n), func(b *testing.B) {
				for range b.N {
					r := runLoad(b, mode, n, d, nodeScript)
					results[mode] = r
					b.ReportMetric(r.cpuPerSec, "cpu-s/s")
					b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
					b.ReportMetric(r.peakMB, "peak-MB")
					b.ReportMetric(float64(r.lost), "lost-calls")
					b.ReportMetric(float64(r.frames)/d.Seconds(), "frames/s")
					b.ReportMetric(r.writesPerFrame(), "writes/frame")
					b.ReportMetric(r.readsPerFrame(), "reads/frame")
					b.ReportMetric(r.cpuPerFrame(), "cpu-µs/frame")
					b.ReportMetric(r.idleMB, "idle-MB")
					b.Logf("%s calls=%d: cpu %.3f s/s, p50 %v p99 %v max %v, rss %.1f MB peak %.1f MB idle %.1f MB after %v (every 5 s: %.1f), lost %d, frames %d, writes/frame %.3f, reads/frame %.3f, cpu/frame %.1f µs",
						mode, n, r.cpuPerSec, r.p50, r.p99, r.max, r.rssMB, r.peakMB, r.idleMB, idleWait, r.idleSeries, r.lost, r.frames, r.writesPerFrame(), r.readsPerFrame(), r.cpuPerFrame())
				}
			})
		}
	}
}

// logRatios prints, for one call count, agentline's CPU per frame against
// the floor's and its peak memory against the marks pass-through's: the
// issue's targets, from the one run.
func logRatios(b *testing.B, calls int, rs map[string]loadResult) {
	ag, ok := rs["agentline"]
	if !ok {
		return
	}
	if f, ok := rs["floor"]; ok && f.cpuPerFrame() > 0 {
		b.Logf("calls=%d: agentline CPU per frame %.2fx the floor's", calls, ag.cpuPerFrame()/f.cpuPerFrame())
	}
	if g, ok := rs["gemini"]; ok && ag.cpuPerFrame() > 0 {
		b.Logf("calls=%d: Gemini relay CPU per frame %.2fx agentline's OpenAI relay (%.1f vs %.1f µs), peak RSS %.1f vs %.1f MB",
			calls, g.cpuPerFrame()/ag.cpuPerFrame(), g.cpuPerFrame(), ag.cpuPerFrame(), g.peakMB, ag.peakMB)
	}
	if m, ok := rs["marks"]; ok && m.peakMB > 0 {
		b.Logf("calls=%d: agentline peak RSS %.2fx the marks pass-through's, p99 %.2fx", calls, ag.peakMB/m.peakMB, float64(ag.p99)/float64(m.p99))
	}
}
