package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// binary is the agentline built by TestMain.
var binary string

func TestMain(m *testing.M) {
	// The tests here run instances as processes of their own and mostly wait
	// on them (kills, restarts, River's rescue), so four run at once, not
	// go test's default of one per CPU, unless -parallel is given.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", "4")
	}
	dir, err := os.MkdirTemp("", "agentline-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "agentline")
	// The binary is built without -race: the instances are the system
	// under test here, not the test's own goroutines.
	build := exec.Command("go", "build", "-o", binary, "github.com/agentline/agentline/cmd/agentline")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build agentline: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	storetest.Main(m, func() { os.RemoveAll(dir) })
}

// The owner account every instance creates on first start (or finds).
const (
	ownerEmail    = "owner@example.com"
	ownerPassword = "owner-password-1"
)

// instance is one agentline process on a loopback port.
type instance struct {
	*apptest.Server // URL and JSON helpers
	name            string
	env             map[string]string
	cmd             *exec.Cmd
	exited          chan struct{}
	exitErr         error
	logPath         string
}

// start runs an instance with the base settings plus env and waits until
// /readyz answers 200. It is stopped (SIGTERM, then SIGKILL) when the test
// ends, and its log is shown when the test failed.
func start(t testing.TB, name string, env map[string]string) *instance {
	t.Helper()
	i := &instance{name: name, env: env, logPath: filepath.Join(t.TempDir(), name+".log")}
	i.run(t)
	t.Cleanup(func() {
		i.stop(t, 30*time.Second)
		if t.Failed() {
			log, _ := os.ReadFile(i.logPath)
			t.Logf("log of %s:\n%s", i.name, tail(string(log), 60))
		}
	})
	return i
}

func (i *instance) run(t testing.TB) {
	t.Helper()
	vars := map[string]string{
		"AGENTLINE_ADDR":           "127.0.0.1:0",
		"AGENTLINE_PASSWORD_COST":  "4",
		"AGENTLINE_ADMIN_EMAIL":    ownerEmail,
		"AGENTLINE_ADMIN_PASSWORD": ownerPassword,
		"AGENTLINE_LOG_LEVEL":      "info",
		"AGENTLINE_DRAIN_TIMEOUT":  "0s",
		"AGENTLINE_METRICS_ADDR":   "127.0.0.1:0", // never the fixed default: instances share the host
		// Never the default (the working directory on PostgreSQL): this
		// package's source directory.
		"AGENTLINE_RECORDINGS_DIR": filepath.Join(filepath.Dir(i.logPath), "recordings"),
		"PATH":                     os.Getenv("PATH"),
	}
	for k, v := range i.env {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	logf, err := os.OpenFile(i.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "serve")
	cmd.Env = env
	cmd.Stdout = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		logf.Close()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", i.name, err)
	}
	i.cmd, i.exited = cmd, make(chan struct{})
	addr := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		// Copy the JSON log to the file, and hand over the listen address.
		defer close(copied)
		defer logf.Close()
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Bytes()
			logf.Write(append(line, '\n'))
			if sent {
				continue
			}
			var l struct{ Msg, Addr string }
			if json.Unmarshal(line, &l) == nil && l.Msg == "listening" {
				addr <- l.Addr
				sent = true
			}
		}
	}()
	go func(done chan struct{}) {
		<-copied // Wait closes the pipe: read it all first
		i.exitErr = cmd.Wait()
		close(done)
	}(i.exited)
	select {
	case a := <-addr:
		i.Server = &apptest.Server{URL: "http://" + a, Client: &http.Client{Timeout: 15 * time.Second}}
	case <-i.exited:
		log, _ := os.ReadFile(i.logPath)
		t.Fatalf("%s exited at start (%v):\n%s", i.name, i.exitErr, tail(string(log), 40))
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not listen within 60s", i.name)
	}
	waitFor(t, 30*time.Second, i.name+" ready", func() bool {
		res, err := i.Client.Get(i.URL + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// signal sends sig to the process.
func (i *instance) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := i.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", i.name, err)
	}
}

// wait waits up to d for the process to exit and returns its error (nil:
// exit status 0).
func (i *instance) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-i.exited:
		return i.exitErr
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v", i.name, d)
		return nil
	}
}

// running reports whether the process has not exited yet.
func (i *instance) running() bool {
	select {
	case <-i.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits up to d, then kills.
func (i *instance) stop(t testing.TB, d time.Duration) {
	if !i.running() {
		return
	}
	i.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-i.exited:
	case <-time.After(d):
		i.cmd.Process.Kill()
		<-i.exited
		t.Errorf("%s did not stop within %v of SIGTERM", i.name, d)
	}
	i.Client.CloseIdleConnections()
}

// waitFor polls cond every 50 ms until it holds, failing the test after d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func itoa(n int64) string { return fmt.Sprint(n) }

// widget sends a /widget/v1 request with key to the instance.
func (i *instance) widget(t *testing.T, method, path, key string, body any) *apptest.Response {
	t.Helper()
	req := i.Request(t, method, path, "", body)
	req.Header.Set("X-API-Key", key)
	return i.Send(t, req)
}

// fixture is what most tests need: a signed-in owner, a project, a
// Gemini-kind agent behind a widget channel with a key, and an OpenAI-kind
// agent answering a phone number.
type fixture struct {
	token     string
	project   agentline.Project
	webAgent  agentline.Agent
	channel   agentline.Channel
	key       string
	callAgent agentline.Agent
	number    string
}

// setup makes the fixture through instance i's API; the phone number goes
// straight into the database at databaseURL, as no carrier is configured.
func setup(t *testing.T, i *instance, databaseURL string) fixture {
	t.Helper()
	var f fixture
	f.token = i.Login(t, ownerEmail, ownerPassword)
	i.Must(t, 201, "POST", "/api/projects", f.token, map[string]string{"name": "Shop"}, &f.project)
	p := "/api/projects/" + itoa(f.project.ID)
	i.Must(t, 201, "POST", p+"/agents", f.token, map[string]string{"name": "Web", "model": geminiModel}, &f.webAgent)
	i.Must(t, 201, "POST", p+"/channels", f.token, map[string]any{"type": "voice_widget", "name": "site", "agent_id": f.webAgent.ID}, &f.channel)
	var key struct{ Key string }
	i.Must(t, 201, "POST", "/api/channels/"+itoa(f.channel.ID)+"/key", f.token, map[string]any{"rate_limit_per_minute": pollLimit}, &key)
	f.key = key.Key
	i.Must(t, 201, "POST", p+"/agents", f.token, map[string]string{"name": "Ada", "model": "gpt-realtime"}, &f.callAgent)
	f.number = "+14155550100"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := openDB(t, ctx, databaseURL).CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: f.project.ID, PhoneNumber: f.number,
		AgentID: &f.callAgent.ID, Status: agentline.NumberActive, CarrierSID: "PN" + itoa(f.project.ID)}); err != nil {
		t.Fatal(err)
	}
	return f
}

// pollLimit is the per-minute limit of the fixture's key: tests poll with it.
const pollLimit = 100_000

const geminiModel = "gemini-2.5-flash-native-audio-preview-09-2025"

// fakes are the outside services every instance talks to: the realtime
// model (OpenAI-compatible WebSocket) for calls, and the Gemini token
// endpoint for widget sessions.
type fakes struct {
	model  *realtimefake.Server
	tokens *httptest.Server
}

func startFakes(t testing.TB) fakes {
	t.Helper()
	f := fakes{model: realtimefake.New("sk-test"), tokens: httptest.NewServer(providerfake.New("", "gemini-test"))}
	t.Cleanup(func() { f.model.Close(); f.tokens.Close() })
	return f
}

// env is the settings of an instance on databaseURL with these fakes; redisURL may be empty.
func (f fakes) env(databaseURL, redisURL string) map[string]string {
	return map[string]string{
		"AGENTLINE_DATABASE_URL": databaseURL,
		"AGENTLINE_REDIS_URL":    redisURL,
		"TELEPHONY_ENABLED":      "true",
		"BOT_HOST":               botHost,
		"TWILIO_AUTH_TOKEN":      carrierToken,
		"OPENAI_API_KEY":         "sk-test",
		"OPENAI_BASE_URL":        f.model.URL(),
		"GEMINI_API_KEY":         "gemini-test",
		"GEMINI_BASE_URL":        f.tokens.URL,
	}
}

// The instances' public host and carrier token: the simulated carrier signs
// its webhooks and stream upgrades with them, as Twilio does.
const (
	botHost      = "bot.example.test"
	carrierToken = "0123456789abcdef0123456789abcdef"
)

// signed is opts signing the simulated carrier's requests.
func signed(opts callsim.Options) callsim.Options {
	opts.AuthToken, opts.BotHost = carrierToken, botHost
	return opts
}

// openDB opens the instances' database directly, to write or read behind
// their backs; it is closed when the test ends.
func openDB(t testing.TB, ctx context.Context, databaseURL string) *store.DB {
	t.Helper()
	db, err := store.Open(ctx, databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
