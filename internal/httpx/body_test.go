package httpx_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline/internal/httpx"
)

// slowEdgeServer serves mux behind an edge that gives bodies timeout to
// arrive, on loopback.
func slowEdgeServer(t *testing.T, timeout time.Duration, mux *http.ServeMux) *httptest.Server {
	t.Helper()
	edge := httpx.NewEdge(slog.New(slog.NewTextHandler(io.Discard, nil)), 1<<20, prometheus.NewRegistry())
	edge.BodyReadTimeout = timeout
	srv := httptest.NewServer(edge.Wrap(mux))
	t.Cleanup(srv.Close)
	return srv
}

// TrickleBody sends a request whose body of n bytes comes one byte every
// 200ms, and reports how many bytes were sent when the server answered or
// closed the connection (n when it waited for the whole body), and the
// answer's status line, if any.
func trickleBody(t *testing.T, addr, path string, n int) (sent int, status string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, n)
	answered := make(chan string, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- "closed: " + err.Error()
			return
		}
		res.Body.Close()
		answered <- res.Status
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for sent = 0; sent < n; sent++ {
		select {
		case status = <-answered:
			return sent, status
		case <-tick.C:
		}
		if _, err := conn.Write([]byte{' '}); err != nil {
			return sent, <-answered
		}
	}
	select {
	case status = <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer and no close 10s after the whole body")
	}
	return n, status
}

// A client trickling its body is answered 400 and cut off well before it
// has sent it all, instead of holding the connection and the handler.
func TestSlowBodyIsCutOff(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("POST /things", httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		var v map[string]any
		return httpx.Decode(r, &v)
	}))
	srv := slowEdgeServer(t, 500*time.Millisecond, mux)
	const n = 40 // 8 s at one byte every 200 ms
	sent, status := trickleBody(t, srv.Listener.Addr().String(), "/things", n)
	t.Logf("answered %q after %d bytes", status, sent)
	if sent == n {
		t.Fatalf("the server waited for the whole trickled body (answer %q)", status)
	}
	if !strings.HasPrefix(status, "400") && !strings.HasPrefix(status, "closed") {
		t.Fatalf("answer to a trickled body = %q, want 400 or a closed connection", status)
	}
}

// The deadline bounds the body only: a handler that has read its body may
// go on longer, with its context alive; a request without a body and a
// hijacked (WebSocket) connection get no deadline at all.
func TestBodyDeadlineBoundsOnlyTheBody(t *testing.T) {
	const timeout = 200 * time.Millisecond
	mux := http.NewServeMux()
	mux.HandleFunc("POST /slow-handler", func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		time.Sleep(3 * timeout)
		fmt.Fprint(w, r.Context().Err())
	})
	mux.HandleFunc("GET /slow-get", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * timeout)
		fmt.Fprint(w, r.Context().Err())
	})
	mux.HandleFunc("GET /upgrade", func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n")
		rw.Flush()
		line, err := rw.ReadString('\n') // sent after three deadlines
		rw.WriteString("echo " + line)
		rw.Flush()
		if err != nil {
			t.Errorf("read on the hijacked connection: %v", err)
		}
	})
	srv := slowEdgeServer(t, timeout, mux)
	for _, req := range []struct{ method, path, body string }{{"POST", "/slow-handler", `{"a":1}`}, {"GET", "/slow-get", ""}} {
		r, _ := http.NewRequest(req.method, srv.URL+req.path, strings.NewReader(req.body))
		res, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(b) != "<nil>" {
			t.Errorf("%s %s = %d, context error %q", req.method, req.path, res.StatusCode, b)
		}
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n"))
	br := bufio.NewReader(conn)
	if res, err := http.ReadResponse(br, nil); err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade = %v %v", res, err)
	}
	time.Sleep(3 * timeout)
	conn.Write([]byte("still here\n"))
	if line, err := br.ReadString('\n'); err != nil || line != "echo still here\n" {
		t.Fatalf("after the deadline the socket answered %q %v", line, err)
	}
}
