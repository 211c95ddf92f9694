package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// runCmd runs the command with settings in env and returns its stdout.
func runCmd(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	vars := map[string]string{"AGENTLINE_PASSWORD_COST": "4"}
	for k, v := range env {
		vars[k] = v
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return vars[k] }, &stdout, &stderr)
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
	if err != nil || !strings.HasPrefix(out, "created user 1 <ann@example.com>") {
		t.Fatalf("user create = %q %v", out, err)
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
	} {
		if _, err := runCmd(t, env, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v = %v, want an error with %q", tc.args, err, tc.want)
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
		done <- run(ctx, []string{"--addr", "127.0.0.1:0"}, func(k string) string { return vars[k] }, &stdout, &stderr)
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
