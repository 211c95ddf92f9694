package relayload

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// PassThrough is the floor: two sockets, one goroutine per direction, each
// message copied as it is with a reused buffer. With marks, each message
// from the model b to the carrier a is followed by a mark message, as a
// relay that tracks playback per delta does (one write each).
func PassThrough(ctx context.Context, a, b *websocket.Conn, marks bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	cp := func(dst, src *websocket.Conn, mark bool) {
		defer wg.Done()
		defer cancel()
		var buf bytes.Buffer
		var markMsg []byte
		for n := 0; ; n++ {
			typ, r, err := src.Reader(ctx)
			if err != nil {
				return
			}
			buf.Reset()
			if _, err := buf.ReadFrom(r); err != nil {
				return
			}
			if err := dst.Write(ctx, typ, buf.Bytes()); err != nil {
				return
			}
			if mark {
				markMsg = strconv.AppendInt(append(markMsg[:0], `{"event":"mark","streamSid":"MZ","mark":{"name":"`...), int64(n), 10)
				markMsg = append(markMsg, `"}}`...)
				if err := dst.Write(ctx, websocket.MessageText, markMsg); err != nil {
					return
				}
			}
		}
	}
	wg.Add(2)
	go cp(b, a, false)
	go cp(a, b, marks)
	wg.Wait()
	a.CloseNow()
	b.CloseNow()
}

// PassThroughHandler accepts a carrier's stream and copies it to and from
// a model socket dialed at modelWS with the bearer key (PassThrough).
func PassThroughHandler(modelWS, apiKey string, marks bool) http.Handler {
	dialOpts := &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + apiKey}}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		carrier, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		model, _, err := websocket.Dial(r.Context(), modelWS, dialOpts)
		if err != nil {
			carrier.CloseNow()
			return
		}
		PassThrough(r.Context(), carrier, model, marks)
	})
}

// Serve runs in a child process: h on a loopback port, whose address it
// prints as "ADDR host:port", until the parent closes its stdin. With
// RELAYLOAD_CPUPROFILE set it writes a CPU profile of itself there.
func Serve(h http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	if path := os.Getenv("RELAYLOAD_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
	return nil
}

// Child is a server running in a child process started by Start.
type Child struct {
	// Addr is the host:port it printed.
	Addr  string
	Pid   int
	stdin interface{ Close() error }
	cmd   *exec.Cmd
}

// Start starts cmd, a child that runs Serve, and reads its address.
func Start(cmd *exec.Cmd) (*Child, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{Pid: cmd.Process.Pid, stdin: stdin, cmd: cmd}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		c.Stop()
		return nil, fmt.Errorf("child: %q %v", line, err)
	}
	c.Addr = strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))
	return c, nil
}

// Stop closes the child's stdin, which ends it, and waits for it.
func (c *Child) Stop() {
	c.stdin.Close()
	c.cmd.Wait()
}
