package cluster_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// BenchmarkCampaignDialer measures the dialing engine in the real binary,
// run as a child process so that its CPU (utime + stime from
// /proc/PID/stat) is the server's alone: the pretend carrier, the
// database reads that follow the run and the benchmark itself live in
// this process (PostgreSQL in its own). Each run creates a campaign of
// CAMPAIGNBENCH_CONTACTS contacts (default 1,000) whose numbers all end in
// 8, so the carrier answers busy (no audio to relay), with
// calls_per_second 50 (the most allowed), max_concurrent_calls 1,000 and
// one attempt each, and starts it over the API. It reports the server's
// CPU per dialed call over the whole run (from the start request to the
// campaign's completion: every claim, reservation, carrier request, status
// callback and settlement, plus its idle work of those seconds, given
// apart as idle-ms/s), the dials per second the carrier saw, and the time
// from the start request's answer to the carrier's log of its first
// create-call request (p50 over CAMPAIGNBENCH_RUNS runs, default 3, with
// the worst). On SQLite, and on PostgreSQL when initdb is on PATH.
func BenchmarkCampaignDialer(b *testing.B) {
	contacts := benchEnv(b, "CAMPAIGNBENCH_CONTACTS", 1000, 10000)
	runs := benchEnv(b, "CAMPAIGNBENCH_RUNS", 3, 10)
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			for range b.N {
				benchCampaignDialer(b, d, contacts, runs)
			}
		})
	}
}

// dialerRun is what one campaign run measured.
type dialerRun struct {
	cpu       time.Duration // the server's, start request to completion
	idle      time.Duration // the server's CPU in each second before the start
	dials     int
	firstDial time.Duration // start answered → the carrier's first create-call
	dialing   time.Duration // first to last create-call
	wall      time.Duration // start answered → completed
}

func benchCampaignDialer(b *testing.B, d store.Dialect, contacts, runs int) {
	dbURL := storetest.URL(b, d)
	var live liveInstances
	proxy := httptest.NewServer(&live)
	b.Cleanup(proxy.Close)
	carrier := twiliofake.New(twiliofake.Options{AuthToken: carrierToken, Play: &twiliofake.Play{Server: proxy.URL}})
	b.Cleanup(carrier.Close)
	env := startFakes(b).env(dbURL, "")
	env["TWILIO_ACCOUNT_SID"], env["TWILIO_API_BASE_URL"] = carrier.AccountSID(), carrier.URL()
	env["AGENTLINE_MAX_CONCURRENT_CALLS"] = strconv.Itoa(2 * contacts)
	srv := start(b, "dialer", env)
	live.set(srv)
	tok := srv.Login(b, ownerEmail, ownerPassword)
	var p agentline.Project
	var agent agentline.Agent
	srv.Must(b, 201, "POST", "/api/projects", tok, map[string]string{"name": "Bench"}, &p)
	srv.Must(b, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &agent)
	srv.Must(b, 201, "POST", "/api/projects/"+itoa(p.ID)+"/telephony/numbers", tok,
		map[string]any{"phone_number": "+14155550100", "agent_id": agent.ID}, nil)
	ctx := context.Background()
	db := openDB(b, ctx, dbURL)
	var all []dialerRun
	for r := range runs {
		all = append(all, dialerBenchRun(b, ctx, srv, db, carrier, p.ID, agent.ID, tok, r, contacts))
	}
	var cpu, idle time.Duration
	var dials int
	var dialing time.Duration
	var firsts []time.Duration
	for _, r := range all {
		cpu, idle, dials, dialing = cpu+r.cpu, idle+r.idle, dials+r.dials, dialing+r.dialing
		firsts = append(firsts, r.firstDial)
		b.Logf("%s run: %d dials, server CPU %v (%.0f µs a dial), idle %v/s, %.1f dials/s, start → first dial %v, completed after %v",
			d, r.dials, r.cpu.Round(time.Millisecond), float64(r.cpu.Microseconds())/float64(r.dials),
			r.idle.Round(time.Microsecond), float64(r.dials-1)/r.dialing.Seconds(), r.firstDial.Round(time.Millisecond),
			r.wall.Round(time.Millisecond))
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(cpu.Microseconds())/float64(dials), "cpu-µs/dial")
	b.ReportMetric(float64(idle.Microseconds())/float64(len(all))/1000, "idle-cpu-ms/s")
	b.ReportMetric(float64(dials-len(all))/dialing.Seconds(), "dials/s")
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "first-dial-p50-ms")
	b.ReportMetric(float64(firsts[len(firsts)-1].Microseconds())/1000, "first-dial-max-ms")
}

// dialerBenchRun creates, fills and starts run r's campaign and waits for
// it to complete (reading the database itself, not the server), measuring
// the server's CPU around it.
func dialerBenchRun(b *testing.B, ctx context.Context, srv *instance, db *store.DB, carrier *twiliofake.Fake,
	projectID, agentID int64, tok string, r, contacts int) dialerRun {
	var c agentline.Campaign
	srv.Must(b, 201, "POST", "/api/projects/"+itoa(projectID)+"/campaigns", tok, map[string]any{"name": fmt.Sprint("Run ", r),
		"agent_id": agentID, "calls_per_second": 50, "max_concurrent_calls": 1000, "max_attempts": 1,
		"calling_window": map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "24:00"}}, &c)
	ours := map[string]bool{}
	var csv strings.Builder
	csv.WriteString("phone_number,timezone\n")
	for i := range contacts {
		n := fmt.Sprintf("+1415%03d%04d", 600+r, i*10+8) // ends in 8: busy
		ours[n] = true
		fmt.Fprintf(&csv, "%s,America/Los_Angeles\n", n)
	}
	req := srv.Request(b, "POST", "/api/campaigns/"+itoa(c.ID)+"/contacts", tok, csv.String())
	req.Header.Set("Content-Type", "text/csv")
	var up struct{ Added int }
	res := srv.Send(b, req)
	if res.Status == 200 {
		res.JSON(b, &up)
	}
	if up.Added != contacts {
		b.Fatalf("upload: %s", res)
	}
	idle0, at0 := procCPUTime(b, srv.cmd.Process.Pid), time.Now()
	time.Sleep(3 * time.Second)
	idle := time.Duration(float64(procCPUTime(b, srv.cmd.Process.Pid)-idle0) / time.Since(at0).Seconds())
	cpu0 := procCPUTime(b, srv.cmd.Process.Pid)
	srv.Must(b, 200, "POST", "/api/campaigns/"+itoa(c.ID)+"/start", tok, nil, nil)
	answered := time.Now()
	waitFor(b, time.Duration(contacts)*time.Second/10+time.Minute, "the campaign completed", func() bool {
		got, err := db.Campaign(ctx, projectID, c.ID)
		return err == nil && got.Status == agentline.CampaignCompleted
	})
	out := dialerRun{cpu: procCPUTime(b, srv.cmd.Process.Pid) - cpu0, idle: idle, wall: time.Since(answered)}
	var created []time.Time
	for _, call := range carrier.Calls() {
		if ours[call.To] {
			created = append(created, call.Created)
		}
	}
	slices.SortFunc(created, time.Time.Compare)
	if len(created) != contacts {
		b.Fatalf("the carrier has %d calls of run %d, want %d", len(created), r, contacts)
	}
	out.dials, out.firstDial, out.dialing = len(created), created[0].Sub(answered), created[len(created)-1].Sub(created[0])
	return out
}

// procCPUTime is the CPU time (user + system, every thread) process pid
// has used, from /proc/PID/stat, in clock ticks of 10 ms.
func procCPUTime(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in
	// parentheses: state is the 3rd field, utime the 14th, stime the 15th.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(utime+stime) * tick
}

// benchEnv reads a positive whole number setting of the benchmark, at
// most max, or def when unset.
func benchEnv(b *testing.B, name string, def, max int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		b.Fatalf("%s=%q: want a whole number from 1 to %d", name, v, max)
	}
	return n
}
