package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/relay/relayload"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// costServer is agentline serving in a child process for the call cost
// run, with an agent and a number linked to it.
type costServer struct {
	pid     int
	url     string
	metrics string // base URL of its /metrics listener
	cmd     *exec.Cmd
	exit    chan error
	gcCPU   atomic.Int64 // GC CPU in µs, summed from GODEBUG=gctrace=1 lines when set
}

const (
	costOwner    = "owner@example.com"
	costPassword = "owner-password-1"
)

// costCommand is this test binary again, as a child of the run, on 2
// cores like the relay's load run, with extra settings.
func costCommand(extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "GOMAXPROCS=2"), extra...)
	return cmd
}

// startCostServer runs `agentline serve` (bin, this test binary or another
// build of it, as the command, see TestMain) on a temp SQLite database, its carrier the fake and its
// model the echoing fake, and creates through the API a project, an agent
// and the number that reaches it, bought from the fake carrier.
func startCostServer(b *testing.B, bin string, fake *twiliofake.Fake, model *realtimefake.Server, extraEnv ...string) *costServer {
	dir := b.TempDir()
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "GOMAXPROCS=2", "AGENTLINE_DOCS_CLI=1",
		"CALLCOST_CPUPROFILE=" + os.Getenv("CALLCOST_CPUPROFILE"),
		"AGENTLINE_ADDR=127.0.0.1:0", "AGENTLINE_METRICS_ADDR=127.0.0.1:0",
		"AGENTLINE_DATABASE_URL=sqlite:" + filepath.Join(dir, "agentline.db"),
		"AGENTLINE_RECORDINGS_DIR=" + filepath.Join(dir, "recordings"),
		"AGENTLINE_ADMIN_EMAIL=" + costOwner, "AGENTLINE_ADMIN_PASSWORD=" + costPassword, "AGENTLINE_PASSWORD_COST=4",
		"TELEPHONY_ENABLED=true", "BOT_HOST=" + costBotHost,
		"TWILIO_ACCOUNT_SID=" + fake.AccountSID(), "TWILIO_AUTH_TOKEN=" + fake.AuthToken(), "TWILIO_API_BASE_URL=" + fake.URL(),
		"OPENAI_API_KEY=" + costKey, "OPENAI_BASE_URL=" + model.URL(),
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout = logf
	pipe, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &costServer{pid: cmd.Process.Pid, cmd: cmd, exit: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		// The JSON log goes to the file; the listen address comes out.
		defer logf.Close()
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			logf.Write(append(sc.Bytes(), '\n'))
			s.gcCPU.Add(gcTraceCPU(sc.Text()))
			var l struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "metrics listening" {
				s.metrics = "http://" + l.Addr
			}
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "listening" {
				addr <- l.Addr
			}
		}
		s.exit <- cmd.Wait()
	}()
	select {
	case a := <-addr:
		s.url = "http://" + a
	case err := <-s.exit:
		b.Fatalf("agentline exited at start: %v (log in %s)", err, dir)
	case <-time.After(60 * time.Second):
		b.Fatal("agentline did not listen within 60 s")
	}
	api := &apptest.Server{URL: s.url, Client: &http.Client{Timeout: 30 * time.Second}}
	token := api.Login(b, costOwner, costPassword)
	var project agentline.Project
	var agent agentline.Agent
	api.Must(b, 201, "POST", "/api/projects", token, map[string]string{"name": "Shop"}, &project)
	p := "/api/projects/" + strconv.FormatInt(project.ID, 10)
	api.Must(b, 201, "POST", p+"/agents", token, map[string]string{"name": "Ada", "model": "gpt-realtime"}, &agent)
	api.Must(b, 201, "POST", p+"/telephony/numbers", token, map[string]any{"phone_number": costNumber, "agent_id": agent.ID}, nil)
	return s
}

// stop ends the server as a deployment does (SIGTERM) and waits for it.
func (s *costServer) stop(b *testing.B) {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exit:
		if err != nil {
			b.Errorf("agentline exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		b.Error("agentline did not stop within 30 s of SIGTERM")
	}
}

// profileIfAsked starts a CPU profile of this process when
// CALLCOST_CPUPROFILE names a file, and returns what stops it.
func profileIfAsked() func() {
	path := os.Getenv("CALLCOST_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// carrierRig is a server with a carrier fake and an echoing model fake of
// its own and a client for its callers: what the call cost runs place
// carrier-shaped calls through. idle is the server's idle rate, measured
// once it has started and placed a round of warm-up calls.
type carrierRig struct {
	model  *realtimefake.Server
	fake   *twiliofake.Fake
	srv    *costServer
	client *http.Client
	idle   idleCPU
}

// startCarrierRig starts a rig whose server is bin (os.Args[0]: this
// build).
func startCarrierRig(b *testing.B, n int, bin string) *carrierRig {
	r := &carrierRig{model: realtimefake.New(costKey), fake: twiliofake.New(twiliofake.Options{})}
	r.model.Echo = true
	r.srv = startCostServer(b, bin, r.fake, r.model)
	r.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: 30 * time.Second}
	// The first calls of a new process pay once for what a running server
	// has: statements prepared, pools and caches filled, goroutine stacks
	// grown. A round of n calls without frames, not counted, so the runs
	// measure what a call costs a server that has taken calls before.
	r.idle = measureIdle(r.srv.pid)
	warm := r.run(n, 0)
	b.Logf("warm-up: %d calls without frames, %.2f ms a call (not counted)", warm.calls, warm.cpu/float64(max(warm.calls, 1))*1000)
	r.idle = measureIdle(r.srv.pid)
	return r
}

// run places n calls of d (no frames when d is 0) and measures them.
func (r *carrierRig) run(n int, d time.Duration) costRun {
	return runCalls(r.srv.pid, r.idle, n, d, func(ctx context.Context, i int, stopAt time.Time, st *relayload.Stats) error {
		return carrierCall(ctx, r.client, r.fake, r.srv.url, i, stopAt, st)
	})
}

// close closes the fakes; the server is stopped apart (srv.stop), since a
// run may need the model fake once its server is gone.
func (r *carrierRig) close() {
	r.model.Close()
	r.fake.Close()
}
