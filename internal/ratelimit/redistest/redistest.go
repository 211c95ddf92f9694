// Package redistest starts a throwaway redis-server on a unix socket in a
// temp dir for tests. Tests are skipped when redis-server is missing, and
// fail instead when AGENTLINE_REQUIRE_REDIS=1. A Server can be killed and
// started again on the same socket, for tests of Redis going away.
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
	return StartServer(t).URL
}

// Server is a redis-server run for one test.
type Server struct {
	// URL is unix:// and the socket path; it stays the same across Restart.
	URL string

	t    testing.TB
	bin  string
	dir  string
	sock string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	logf *os.File
}

// StartServer runs a redis-server for the test, stopped when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_REDIS") == "1" {
			t.Fatalf("redis-server is required (AGENTLINE_REQUIRE_REDIS=1): %v", err)
		}
		t.Skipf("redis-server not available: %v", err)
	}
	dir := t.TempDir()
	s := &Server{t: t, bin: bin, dir: dir, sock: filepath.Join(dir, "redis.sock")}
	s.URL = "unix://" + s.sock
	logf, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	s.logf = logf
	t.Cleanup(func() {
		s.stop(syscall.SIGTERM)
		logf.Close()
	})
	s.start()
	return s
}

// start runs redis-server on the socket and waits until it answers.
func (s *Server) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "--port", "0", "--unixsocket", s.sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--loglevel", "warning")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = s.logf, s.logf
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done

	opt, _ := redis.ParseURL(s.URL)
	c := redis.NewClient(opt)
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-done:
			log, _ := os.ReadFile(s.logf.Name())
			s.t.Fatalf("redis-server exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server did not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the running redis-server with sig (SIGKILL after 5 s) and waits
// for it; it does nothing when none runs.
func (s *Server) stop(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGCONT) // a frozen server handles sig only once thawed
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd, s.done = nil, nil
}

// Kill ends redis-server abruptly (SIGKILL, as a crash or an OOM kill
// would), losing its data, and returns once it has exited.
func (s *Server) Kill() { s.stop(syscall.SIGKILL) }

// Freeze stops redis-server (SIGSTOP) without closing its socket or its
// connections: it accepts nothing and answers nothing, like a hung server or
// a network dropping packets, until Thaw.
func (s *Server) Freeze() { s.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw lets a frozen redis-server run again (SIGCONT).
func (s *Server) Thaw() { s.cmd.Process.Signal(syscall.SIGCONT) }

// Restart starts redis-server again on the same socket, empty, and returns
// once it answers.
func (s *Server) Restart() {
	s.t.Helper()
	s.stop(syscall.SIGKILL)
	s.start()
}
