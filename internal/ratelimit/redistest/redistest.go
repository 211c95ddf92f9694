// Package redistest starts a throwaway redis-server on a unix socket in a
// temp dir for tests. Tests are skipped when redis-server is missing, and
// fail instead when AGENTLINE_REQUIRE_REDIS=1.
package redistest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Start runs a redis-server for the test and returns its URL
// (unix:///...sock). It stops when the test ends.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_REDIS") == "1" {
			t.Fatalf("redis-server is required (AGENTLINE_REQUIRE_REDIS=1): %v", err)
		}
		t.Skipf("redis-server not available: %v", err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	url := "unix://" + sock
	opt, _ := redis.ParseURL(url)
	c := redis.NewClient(opt)
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return url
		}
		select {
		case <-done:
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("redis-server exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
