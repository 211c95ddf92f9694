package relay

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The batching of wire.go leans on how github.com/coder/websocket uses the
// net.Conn under it. These tests pin each of those behaviours, so that a
// new version of the library that changes one fails here, by name, rather
// than as calls whose audio stalls or leaves one message per write.

// wirePair is a socket Accept opened (the carrier's side) and one Dial
// opened to it (the model's side), both over wires, on loopback.
func wirePair(t *testing.T) (server, client *Socket) {
	t.Helper()
	accepted := make(chan *Socket, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- s
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err := Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case server = <-accepted:
	case <-ctx.Done():
		t.Fatal("no socket accepted")
	}
	if server.wire == nil || client.wire == nil {
		t.Fatal("Accept or Dial opened a socket without a wire")
	}
	t.Cleanup(func() {
		server.CloseNow()
		client.CloseNow()
	})
	return server, client
}

func readText(t *testing.T, s *Socket) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, msg, err := s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return string(msg)
}

// Both sides read through their wire: on Accept the library resets the
// hijacked connection's bufio.Reader to read from the net.Conn Hijack
// returned (the wire), and on Dial it reads the upgraded response body,
// whose connection is the wire. If it kept reading from the conn net/http
// hijacked underneath, beforeRead would never run and whatever a reader
// queued would wait for maxQueued instead of the next read.
func TestLibraryReadsThroughTheWire(t *testing.T) {
	server, client := wirePair(t)
	var serverReads, clientReads atomic.Int32
	server.onRead(func() error { serverReads.Add(1); return nil })
	client.onRead(func() error { clientReads.Add(1); return nil })
	ctx := context.Background()
	if err := client.Write(ctx, websocket.MessageText, []byte("to server")); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, server); got != "to server" || serverReads.Load() == 0 {
		t.Fatalf("server read %q with %d reads from its wire; want the message through the wire", got, serverReads.Load())
	}
	if err := server.Write(ctx, websocket.MessageText, []byte("to client")); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, client); got != "to client" || clientReads.Load() == 0 {
		t.Fatalf("client read %q with %d reads from its wire; want the message through the wire", got, clientReads.Load())
	}
}

// The library reads frames through a bufio.Reader on the reader's own
// goroutine, so the wire is read only when the messages of the last read
// have all been handed out: a burst that arrived in one read is read as
// many messages with one wire read, and the flush before the next one
// sends all that the reader queued from it in one batch. A library that
// read frames straight from the conn, or ahead on a goroutine of its own,
// would flush once per message or while messages still wait to be read.
func TestLibraryBuffersABurstBehindOneWireRead(t *testing.T) {
	server, client := wirePair(t)
	var reads atomic.Int32
	server.onRead(func() error { reads.Add(1); return nil })
	const burst = 20
	ctx := context.Background()
	client.wire.hold() // the burst leaves in one write, as a batch does
	for i := range burst {
		if err := client.Write(ctx, websocket.MessageText, []byte("message "+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.wire.release(); err != nil {
		t.Fatal(err)
	}
	for i := range burst {
		if got, want := readText(t, server), "message "+string(rune('a'+i)); got != want {
			t.Fatalf("message %d: %q, want %q", i, got, want)
		}
		if n := reads.Load(); n != 1 {
			t.Fatalf("after message %d of a burst sent in one write: %d wire reads, want 1", i, n)
		}
	}
}

// Conn.Write has put the whole frame on the wire when it returns (the
// library flushes its bufio.Writer after every message, in pieces when the
// message is larger than the buffer): so a held wire collects complete
// messages, and release sends nothing half-framed.
func TestLibraryWritesWholeMessagesBeforeWriteReturns(t *testing.T) {
	server, client := wirePair(t)
	msg := bytes.Repeat([]byte("x"), 3*writerBufSize) // larger than the carrier socket's buffer
	ctx := context.Background()
	for _, side := range []struct {
		name       string
		from, to   *Socket
		headerSize int
	}{
		{"accepted (unmasked)", server, client, 4}, // 2 bytes + 16-bit length
		{"dialed (masked)", client, server, 8},     // and a 4-byte mask key
	} {
		side.from.wire.hold()
		if err := side.from.Write(ctx, websocket.MessageText, msg); err != nil {
			t.Fatal(err)
		}
		side.from.wire.mu.Lock()
		held := len(side.from.wire.buf)
		side.from.wire.mu.Unlock()
		if want := side.headerSize + len(msg); held != want {
			t.Errorf("%s: %d bytes on the held wire when Write returned, want the whole frame, %d", side.name, held, want)
		}
		if err := side.from.wire.release(); err != nil {
			t.Fatal(err)
		}
		if got := readText(t, side.to); got != string(msg) {
			t.Fatalf("%s: the peer read %d bytes, want %d", side.name, len(got), len(msg))
		}
	}
}
