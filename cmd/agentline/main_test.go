package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/relay/relayload"
)

// TestMain runs this test binary as the agentline command itself when
// AGENTLINE_DOCS_CLI=1: the docs harness (docs_test.go) puts it on PATH as
// `agentline`, so the docs' command lines run without a separate build, and
// the call cost run (callcost_test.go) serves with it, profiled when
// CALLCOST_CPUPROFILE says where. With RELAYLOAD_MODE=floor it is the call
// cost run's copy-only pass-through floor instead.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("RELAYLOAD_MODE") == "floor":
		if err := relayload.Serve(relayload.PassThroughHandler(os.Getenv("RELAYLOAD_MODEL_WS"), costKey, false)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case os.Getenv("AGENTLINE_DOCS_CLI") == "1":
		stop := profileIfAsked()
		main()
		stop()
		os.Exit(0)
	}
	storetest.Main(m)
}

// runCmd runs the command with settings in env, standard input a
// terminal, and returns its stdout.
func runCmd(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	return runCmdIn(t, env, nil, args...)
}

// runCmdIn is runCmd with stdin piped in (nil: a terminal).
func runCmdIn(t *testing.T, env map[string]string, stdin io.Reader, args ...string) (string, error) {
	t.Helper()
	vars := map[string]string{"AGENTLINE_PASSWORD_COST": "4"}
	for k, v := range env {
		vars[k] = v
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return vars[k] }, stdin, &stdout, &stderr)
	return stdout.String(), err
}

func TestVersionAndHelp(t *testing.T) {
	out, err := runCmd(t, nil, "version")
	if err != nil || out != "agentline dev\n" {
		t.Fatalf("version = %q %v", out, err)
	}
	out, err = runCmd(t, nil, "help")
	if err != nil || !strings.Contains(out, "AGENTLINE_DATABASE_URL") {
		t.Fatalf("help = %q %v", out, err)
	}
}

// Asked-for help, in any spelling and after any command, prints the flags
// and is no failure (exit 0).
func TestHelpIsNoError(t *testing.T) {
	for _, args := range [][]string{
		{"help"}, {"-h"}, {"--help"}, {"-help"}, {"serve", "--help"}, {"migrate", "-h"}, {"user", "create", "--help"}, {"user", "--help"}, {"user", "-h"}, {"call", "-h"},
	} {
		out, err := runCmd(t, nil, args...)
		if err != nil || !strings.Contains(out, "-") || !strings.Contains(strings.ToLower(out), "usage") && !strings.Contains(out, "flags of") {
			t.Errorf("%v = %q %v, want the flags and no error", args, out, err)
		}
	}
	if out, _ := runCmd(t, nil, "--help"); !strings.Contains(out, "AGENTLINE_DATABASE_URL") {
		t.Errorf("--help lacks the settings: %q", out)
	}
}

func TestMigratePrintsMigrations(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			out, err := runCmd(t, map[string]string{"AGENTLINE_DATABASE_URL": storetest.URL(t, d)}, "migrate")
			if err != nil || !strings.Contains(out, "applied 00001_foundation.sql") {
				t.Fatalf("migrate = %q %v", out, err)
			}
		})
	}
	// The flag works as well as the env var.
	url := storetest.URL(t, store.SQLite)
	if out, err := runCmd(t, nil, "migrate", "--database-url", url); err != nil || !strings.Contains(out, "applied") {
		t.Fatalf("migrate --database-url = %q %v", out, err)
	}
}

func TestUserCreate(t *testing.T) {
	env := map[string]string{"AGENTLINE_DATABASE_URL": storetest.URL(t, store.SQLite)}
	out, err := runCmd(t, env, "user", "create", "--email", "Ann@Example.com", "--password", "long enough")
	if err != nil || !strings.HasPrefix(out, "created instance administrator 1 <ann@example.com>") {
		t.Fatalf("user create (the first account) = %q %v", out, err)
	}
	if out, err = runCmd(t, env, "user", "create", "--email", "ben@example.com", "--password", "long enough"); err != nil || !strings.HasPrefix(out, "created user 2 <ben@example.com>") {
		t.Fatalf("user create = %q %v", out, err)
	}
	if out, err = runCmd(t, env, "user", "create", "--email", "cy@example.com", "--password", "long enough", "--admin"); err != nil || !strings.HasPrefix(out, "created instance administrator 3 <cy@example.com>") {
		t.Fatalf("user create --admin = %q %v", out, err)
	}
	out, err = runCmd(t, env, "user", "list")
	if err != nil || !regexp.MustCompile(`(?m)^1\s+ann@example.com\s+true\s+false`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^2\s+ben@example.com\s+false\s+false`).MatchString(out) {
		t.Fatalf("user list = %q %v", out, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "create", "--email", "ann@example.COM", "--password", "long enough"}, "already exists"},
		{[]string{"user", "create", "--email", "bob@example.com", "--password", "short"}, "at least 8"},
		{[]string{"user", "create", "--email", "bob"}, "usage"},
		{[]string{"user", "create", "--password", "long enough"}, "usage"},
		{[]string{"user", "create", "--email", "bob@example.com", "--password", "long enough", "--what"}, "what"},
		{[]string{"user", "delete"}, "usage"},
		{[]string{"user"}, "usage"},
		{[]string{"user", "reset-password"}, "usage"},
		{[]string{"user", "reset-password", "--email", "nobody@example.com"}, "not found"},
	} {
		if _, err := runCmd(t, env, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v = %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// The password of user create can stay off the command line: piped in on
// standard input (with --password - or none), or in AGENTLINE_USER_PASSWORD.
func TestUserCreatePasswordOffTheCommandLine(t *testing.T) {
	env := map[string]string{"AGENTLINE_DATABASE_URL": storetest.URL(t, store.SQLite)}
	for i, tc := range []struct {
		env   map[string]string
		stdin io.Reader
		args  []string
	}{
		{nil, strings.NewReader("long enough\n"), []string{"--password", "-"}},
		{nil, strings.NewReader("long enough\r\nsecond line ignored\n"), nil},
		{nil, strings.NewReader("no newline at the end"), []string{"--password=-"}},
		{map[string]string{"AGENTLINE_USER_PASSWORD": "long enough"}, nil, nil},
		// The flag's value wins over the environment.
		{map[string]string{"AGENTLINE_USER_PASSWORD": "short"}, nil, []string{"--password", "long enough"}},
	} {
		vars := map[string]string{"AGENTLINE_DATABASE_URL": env["AGENTLINE_DATABASE_URL"]}
		for k, v := range tc.env {
			vars[k] = v
		}
		email := fmt.Sprintf("user%d@example.com", i)
		out, err := runCmdIn(t, vars, tc.stdin, append([]string{"user", "create", "--email", email}, tc.args...)...)
		if err != nil || !strings.Contains(out, "<"+email+">") {
			t.Errorf("case %d: %q %v", i, out, err)
		}
	}
	// What was read is the password, without the line break: sign in with it.
	db, err := store.Open(context.Background(), env["AGENTLINE_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, password := range []string{"long enough", "long enough", "no newline at the end", "long enough", "long enough"} {
		if _, err := auth.New(db, time.Hour).Login(context.Background(), fmt.Sprintf("user%d@example.com", i), password, "127.0.0.1"); err != nil {
			t.Errorf("user%d signs in: %v", i, err)
		}
	}
	for _, tc := range []struct {
		stdin io.Reader
		args  []string
		want  string
	}{
		{nil, []string{"--password", "-"}, "terminal"},
		{strings.NewReader(""), []string{"--password", "-"}, "no password on standard input"},
		{strings.NewReader("\n"), nil, "no password on standard input"},
		{strings.NewReader("short\n"), nil, "at least 8"},
		{nil, nil, "AGENTLINE_USER_PASSWORD"},
	} {
		if _, err := runCmdIn(t, env, tc.stdin, append([]string{"user", "create", "--email", "zed@example.com"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

func TestBadCommandsAndFlags(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"serve", "--no-such-flag"},
		{"--no-such-flag"},
		{"serve", "--env", "staging"},
		{"migrate", "--database-url", "mysql://x"},
		{"serve", "--twilio-account-sid", "AC1"},
		{"serve", "--twilio-auth-token", "with space"},
	} {
		if _, err := runCmd(t, nil, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	// Production with telephony and nothing else refuses to start.
	_, err := runCmd(t, map[string]string{"AGENTLINE_ENV": "production", "TELEPHONY_ENABLED": "true"})
	if err == nil || strings.Count(err.Error(), "\n") != 3 || !strings.Contains(err.Error(), "BOT_HOST") {
		t.Fatalf("production without settings: %v", err)
	}
}

// With no subcommand, run serves until its context ends, then returns nil.
func TestServeIsTheDefault(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	vars := map[string]string{"AGENTLINE_DATABASE_URL": storetest.URL(t, store.SQLite), "AGENTLINE_PASSWORD_COST": "4",
		"AGENTLINE_METRICS_ADDR": "127.0.0.1:0"}
	var stdout, stderr apptest.Buffer // the server logs while the test reads
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0"}, func(k string) string { return vars[k] }, nil, &stdout, &stderr)
	}()
	addr, metricsAddr := "", ""
	for deadline := time.Now().Add(20 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(stderr.String(), "\n") {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
				addr = rec.Addr
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "metrics listening" {
				metricsAddr = rec.Addr
			}
		}
	}
	if addr == "" || metricsAddr == "" {
		cancel()
		t.Fatalf("no listening line; err %v; log:\n%s", <-done, stderr.String())
	}
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()
	// Metrics on their own listener, not on the public one.
	if res, err := http.Get("http://" + addr + "/metrics"); err != nil || res.StatusCode != 404 {
		t.Errorf("public /metrics: %v %v, want 404", res, err)
	} else {
		res.Body.Close()
	}
	res, err = http.Get("http://" + metricsAddr + "/metrics")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("metrics listener: %v %v", res, err)
	}
	res.Body.Close()
	if !strings.Contains(stdout.String(), "password:") {
		t.Errorf("first start printed no credentials: %q", stdout.String())
	}
	// Development without OPENAI_API_KEY: the sandbox is on, said once.
	if n := strings.Count(stderr.String(), "the sandbox provider is on by default"); n != 1 {
		t.Errorf("sandbox default logged %d times, want once; log:\n%s", n, stderr.String())
	}
	if res, err := http.Post("http://"+addr+"/sandbox/openai/v1/realtime/client_secrets", "application/json", strings.NewReader("{}")); err == nil {
		res.Body.Close()
		if res.StatusCode == 404 {
			t.Errorf("sandbox provider not served by default in development")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v after cancel, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// Without mail, an operator resets a password from the command line: the
// link it prints works once, on a server over the same database, and ends
// the account's sessions.
func TestUserResetPassword(t *testing.T) {
	url := storetest.URL(t, store.SQLite)
	env := map[string]string{"AGENTLINE_DATABASE_URL": url, "AGENTLINE_PUBLIC_URL": "https://agentline.example.com"}
	if _, err := runCmd(t, env, "user", "create", "--email", "ann@example.com", "--password", "long enough"); err != nil {
		t.Fatal(err)
	}
	s := apptest.Start(t, apptest.Config(t, url, nil))
	old := s.Login(t, "ann@example.com", "long enough")
	out, err := runCmd(t, env, "user", "reset-password", "--email", "Ann@Example.com")
	link := regexp.MustCompile(`https://agentline\.example\.com/#/reset/(alr_[A-Za-z0-9_-]{43})\n`).FindStringSubmatch(out)
	if err != nil || link == nil {
		t.Fatalf("reset-password = %q %v", out, err)
	}
	s.Must(t, 200, "POST", "/api/auth/reset-password", "", map[string]string{"token": link[1], "password": "the new one"}, nil)
	if r := s.Do(t, "GET", "/api/me", old, nil); r.Status != 401 {
		t.Fatalf("the old session = %s", r)
	}
	s.Login(t, "ann@example.com", "the new one")
	if r := s.Do(t, "POST", "/api/auth/reset-password", "", map[string]string{"token": link[1], "password": "and again"}); r.Status != 404 {
		t.Fatalf("the link used twice = %s", r)
	}
}
