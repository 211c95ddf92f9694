package app_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// A client sending its body one byte every 200ms is answered and cut off
// once AGENTLINE_BODY_READ_TIMEOUT has passed, long before the body would
// be complete; the answer names no address.
func TestSlowBodyIsCutOffOverTheNetwork(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_BODY_READ_TIMEOUT": "1s"})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 60 // 12 s at one byte every 200 ms
	fmt.Fprintf(conn, "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", n)
	answered := make(chan string, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- "closed: " + err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		answered <- res.Status + " " + string(b)
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	answer := ""
	for sent := 0; answer == "" && sent < n; sent++ {
		select {
		case answer = <-answered:
		case <-tick.C:
			conn.Write([]byte{' '}) // an error here means the server closed: the reader reports it
		}
	}
	if answer == "" {
		t.Fatal("the server read the whole trickled body")
	}
	if !strings.HasPrefix(answer, "closed") && (!strings.HasPrefix(answer, "400") || !strings.Contains(answer, "did not arrive within 1s") || strings.Contains(answer, "127.0.0.1")) {
		t.Fatalf("answer = %q, want a 400 naming the timeout (or a closed connection)", answer)
	}
}
