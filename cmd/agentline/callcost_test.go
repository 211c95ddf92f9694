package main

// The call cost run: what one phone call costs the whole agentline server
// beyond relaying its frames. The real server (this test binary as
// `agentline serve`, SQLite in a temp dir) runs in a child process; this
// process is the carrier (a Twilio fake for its REST API, and 200 callers
// doing what Twilio does: the signed inbound webhook, the media stream's
// signed upgrade, connected and start with the TwiML's parameters, a 20 ms
// frame each way every 20 ms, stop, the signed completed status callback)
// and the model (an echoing realtime fake). The server's CPU (utime+stime
// from /proc) is read before the calls and after it is idle again, so
// setup and the end's work (records, log, conversation life, jobs) count.
// Calls of two lengths give the cost per call beyond frames; the copy-only
// pass-through floor (relayload.PassThrough, in a child of its own) runs
// the long calls in the same run. Run by `make bench`:
//
//	go test -run '^$' -bench CallCost -benchtime 1x ./cmd/agentline/

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/relay/relayload"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// The public host the server is configured with, and the number called.
const (
	costBotHost = "bot.example.test"
	costNumber  = "+14155550100"
	costCaller  = "+14155550199"
	costKey     = "sk-callcost"
)

// costRun is one batch of concurrent calls against one process.
type costRun struct {
	calls        int
	d            time.Duration
	cpu          float64       // CPU seconds of the process, start of the calls to idle, idle CPU taken off
	raw          float64       // the same with its idle CPU
	wall         time.Duration // start of the calls to idle
	lost, frames int
	p50, p99     time.Duration
}

// idleCPU is the CPU seconds per second a process spends doing nothing.
type idleCPU float64

// waitIdle waits until pid's CPU stops growing, at most limit, and
// returns its CPU then. Stopped means quiet (under 10 ms a second past its
// idle rate) for quietFor in a row: longer than the job queue takes to
// pick up and run what a call's end enqueued, so the end's jobs are done,
// not just pending.
func waitIdle(pid int, idle idleCPU, limit time.Duration) float64 {
	const quietFor = 6
	deadline := time.Now().Add(limit)
	prev, _ := relayload.ProcCPU(pid)
	for quiet := 0; quiet < quietFor && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		cur, _ := relayload.ProcCPU(pid)
		if cur-prev <= 0.010+float64(idle) {
			quiet++
		} else {
			quiet = 0
		}
		prev = cur
	}
	return prev
}

// measureIdle waits for pid to settle, then measures its CPU over 5 s,
// to the nanosecond (ProcCPUPrecise: 10 ms ticks would make it ±2 ms/s).
func measureIdle(pid int) idleCPU {
	waitIdle(pid, 0.005, 30*time.Second)
	c0, _ := relayload.ProcCPUPrecise(pid)
	time.Sleep(5 * time.Second)
	c1, _ := relayload.ProcCPUPrecise(pid)
	return idleCPU((c1 - c0) / 5)
}

// runCalls places n calls of length d through call, spread over the first
// second, and measures pid's CPU from before the first to idle after the
// last.
func runCalls(pid int, idle idleCPU, n int, d time.Duration, call func(ctx context.Context, i int, stopAt time.Time, st *relayload.Stats) error) costRun {
	ctx, cancel := context.WithTimeout(context.Background(), d+60*time.Second)
	defer cancel()
	stats := make([]relayload.Stats, n)
	var wg sync.WaitGroup
	t0 := time.Now()
	c0, _ := relayload.ProcCPU(pid)
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * time.Second / time.Duration(n))
			st := &stats[i]
			st.Lat = make([]time.Duration, 0, int(d/(20*time.Millisecond))+64)
			if err := call(ctx, i, time.Now().Add(d), st); err != nil {
				st.Failed = true
				fmt.Fprintf(os.Stderr, "call %d: %v\n", i, err)
			}
		})
	}
	wg.Wait()
	c1 := waitIdle(pid, idle, 90*time.Second)
	r := costRun{calls: n, d: d, wall: time.Since(t0)}
	r.raw = c1 - c0
	r.cpu = r.raw - float64(idle)*r.wall.Seconds()
	var all []time.Duration
	for _, st := range stats {
		if st.Failed || st.Got < st.Sent*95/100 {
			r.lost++
		}
		r.frames += st.Got
		all = append(all, st.Lat...)
	}
	slices.Sort(all)
	if len(all) > 0 {
		r.p50, r.p99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r
}

// carrierCall is one inbound call as Twilio places it on the server at
// base (http://host:port): the call exists at the carrier, the signed
// voice webhook, the media stream its TwiML names (signed upgrade, start
// with its parameters, frames until stopAt, stop), then the signed
// completed status callback to the number's status URL.
func carrierCall(ctx context.Context, client *http.Client, fake *twiliofake.Fake, base string, i int, stopAt time.Time, st *relayload.Stats) error {
	started := time.Now()
	sid := fake.IncomingCall(costCaller, costNumber)
	opts := callsim.Options{AuthToken: fake.AuthToken(), BotHost: costBotHost}
	doc, err := callsim.Webhook(ctx, client, base, sid, costCaller, costNumber, opts)
	if err != nil {
		return err
	}
	s, err := callsim.ParseTwiML(doc)
	if err != nil {
		return err
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return err
	}
	header := http.Header{"X-Twilio-Signature": {twiliofake.Sign(fake.AuthToken(), s.URL, url.Values{})}}
	stream := relayload.Stream{URL: "ws://" + strings.TrimPrefix(base, "http://") + u.RequestURI(), Header: header, N: i, CallSID: sid, Params: s.Params}
	if err := relayload.Call(ctx, stream, started, stopAt, st); err != nil {
		return err
	}
	fake.SetCallStatus(sid, "completed")
	form := url.Values{
		"AccountSid": {fake.AccountSID()}, "ApiVersion": {"2010-04-01"}, "CallSid": {sid}, "CallStatus": {"completed"},
		"Called": {costNumber}, "Caller": {costCaller}, "To": {costNumber}, "From": {costCaller}, "Direction": {"inbound"},
		"CallbackSource": {"call-progress-events"}, "Timestamp": {time.Now().UTC().Format(time.RFC1123Z)},
		"SequenceNumber": {"0"}, "CallDuration": {strconv.Itoa(int(time.Since(started).Round(time.Second).Seconds()))},
	}
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/api/telephony/status", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twiliofake.Sign(fake.AuthToken(), "https://"+costBotHost+"/api/telephony/status", form))
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent && res.StatusCode != http.StatusOK {
		return fmt.Errorf("status callback: %s", res.Status)
	}
	return nil
}

// BenchmarkCallCost runs CALLCOST_CALLS concurrent calls (default 200) of
// CALLCOST_SECONDS (default "8,24") through the whole server, then the
// longest through the copy-only floor, and reports the server's CPU per
// run, the per-call cost beyond frames derived from the two lengths, and
// the server's CPU against the floor's at the longest. With
// CALLCOST_CPUPROFILE=path the server writes a CPU profile of its whole
// life there (setup and idle included).
func BenchmarkCallCost(b *testing.B) {
	n := costEnvInt(b, "CALLCOST_CALLS", 200, 2000)
	var lengths []time.Duration
	for _, f := range strings.Split(cmp.Or(os.Getenv("CALLCOST_SECONDS"), "1,8,24"), ",") {
		s, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || s < 1 || s > 300 {
			b.Fatalf("CALLCOST_SECONDS: %q, want lengths of 1..300 s", f)
		}
		lengths = append(lengths, time.Duration(s)*time.Second)
	}
	if len(lengths) < 2 || !slices.IsSorted(lengths) || lengths[len(lengths)-2] == lengths[len(lengths)-1] {
		b.Fatal("CALLCOST_SECONDS: two lengths or more, shortest first, the two longest different")
	}
	for range b.N {
		load := fmt.Sprintf("load average %s", relayload.LoadAverage())
		rig := startCarrierRig(b, n, os.Args[0])
		var runs []costRun
		for _, d := range lengths {
			runs = append(runs, rig.run(n, d))
			load += " " + relayload.LoadAverage()
		}
		rig.srv.stop(b)
		floor := runFloor(b, rig.model, n, lengths[len(lengths)-1])
		load += " " + relayload.LoadAverage()
		rig.close()
		reportCallCost(b, runs, floor, rig.idle, load)
	}
}

// runFloor runs n calls of d through the copy-only pass-through in a
// child process of its own.
func runFloor(b *testing.B, model *realtimefake.Server, n int, d time.Duration) costRun {
	f := startFloor(b, model)
	defer f.stop()
	return f.run(n, d)
}

// reportCallCost derives the per-call cost beyond frames: the two longest
// runs relay the same calls but for their length, so the difference of
// their CPU over the difference of their frames is the cost of a frame (a
// frame each way: what the callers got back), and what a run spent beyond
// its frames is its calls' setup and end. Frames, not seconds: on a busy
// machine the callers fall behind their pace by different amounts. The
// shorter the run, the less an error in the cost of a frame moves its
// figure: a run of 1 s calls is nearly all setup and end.
func reportCallCost(b *testing.B, runs []costRun, floor costRun, idle idleCPU, load string) {
	short, long := runs[len(runs)-2], runs[len(runs)-1]
	perFrame := (long.cpu - short.cpu) / float64(long.frames-short.frames)
	perCall := func(r costRun) float64 { return (r.cpu - perFrame*float64(r.frames)) / float64(r.calls) }
	ratio := long.cpu / floor.cpu
	for _, r := range append(runs, floor) {
		b.Logf("%d calls of %v: CPU %.2f s (%.2f s with idle) over %v, lost %d, frames %d, p50 %v p99 %v",
			r.calls, r.d, r.cpu, r.raw, r.wall.Round(100*time.Millisecond), r.lost, r.frames, r.p50, r.p99)
	}
	b.Logf("server: %.2f s at %d×%v (%.2f s with idle); floor %.2f s at %d×%v: %.2fx the floor's (%.2fx with idle %.1f ms/s)",
		long.cpu, long.calls, long.d, long.raw, floor.cpu, floor.calls, floor.d, ratio, long.raw/floor.raw, float64(idle)*1000)
	for _, r := range runs[:len(runs)-1] {
		setup := perCall(r)
		b.Logf("per call, from the %v calls: %.2f ms beyond frames (%.1f s of its audio at %.1f µs per round-tripped frame; the floor's %.1f µs)",
			r.d, setup*1000, setup/(perFrame*50), perFrame*1e6, floor.cpu/float64(floor.frames)*1e6)
		b.ReportMetric(setup*1000, fmt.Sprintf("setup-ms/call@%ds", int(r.d.Seconds())))
	}
	b.Logf("%s", load)
	b.ReportMetric(perFrame*1e6, "cpu-µs/frame")
	b.ReportMetric(long.cpu, "cpu-s-long")
	b.ReportMetric(floor.cpu, "floor-cpu-s")
	b.ReportMetric(ratio, "x-floor")
	b.ReportMetric(long.raw/floor.raw, "x-floor-with-idle")
	lost := floor.lost
	for _, r := range runs {
		lost += r.lost
	}
	b.ReportMetric(float64(lost), "lost-calls")
}

func costEnvInt(b *testing.B, name string, def, limit int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > limit {
		b.Fatalf("%s: want 1..%d, got %q", name, limit, v)
	}
	return n
}
