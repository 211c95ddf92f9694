package relay

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/egress"
)

// The relay's sockets send several queued messages in one write, with the
// framing still done by coder/websocket. The library flushes its buffered
// writer after every message, before Conn.Write returns, and it has no API
// to write several messages and flush once, so the batching happens one
// level down: a wire is the net.Conn under the library, and while the
// relay's sender holds it, the library's flushes only append to the wire's
// buffer; releasing it sends the lot in one write (whole messages only:
// wire_test.go checks that Write leaves no part of one in the library's
// buffer). Reads go through the wire too, and that is where the readers'
// queued messages are flushed (see Read). Accept and Dial open Sockets over a wire. A socket
// without one (Dial with an HTTPClient of its own) still works, one write
// per message, and its close handshake is bounded only by the library's
// own timeouts (5 s).

// Socket is a WebSocket the relay reads and writes: the library's
// connection and, when Accept or Dial opened it, the wire under it.
type Socket struct {
	*websocket.Conn
	wire *wire // nil when opened otherwise
}

// maxKeptBatch bounds the batch buffer a wire keeps between batches, so
// that one burst does not pin its memory for the rest of the call.
const maxKeptBatch = 32 << 10

type wire struct {
	net.Conn
	mu   sync.Mutex // held across the socket write: bytes leave in call order
	held bool
	buf  []byte
	// beforeRead, once set, runs before every read from the network (see
	// Read): the relay flushes there what its reader of this socket has
	// queued for the other socket (see sender).
	beforeRead atomic.Pointer[func() error]
}

// Read reads from the network, after running beforeRead: this is where
// the relay's queued messages are flushed, and nowhere else on the
// readers' path. That is right only because of how coder/websocket (v1.8)
// reads, which wire_test.go pins, each part by a test:
//
//   - it reads through this wire: Accept resets the hijacked connection's
//     bufio.Reader to read from the net.Conn Hijack returned (hijackWriter
//     returns the wire), and Dial reads the upgraded response body over
//     the transport's connection (dialWire made it a wire). Otherwise Read
//     would never run and queued messages would wait for maxQueued;
//   - it reads frames through that bufio.Reader, on the goroutine that
//     called Conn.Read, with no read-ahead goroutine (the relay never
//     calls CloseRead, which would start one): so Read runs, on the
//     reader's goroutine, only once every message of the last network read
//     has been handed to the relay's reader, which has queued them all. The
//     flush then sends them as one batch, before the reader waits for more.
//
// The flush's error is not this read's: the sender keeps it, refuses
// further writes and tells the relay (its fail func), which ends the call.
func (w *wire) Read(p []byte) (int, error) {
	if f := w.beforeRead.Load(); f != nil {
		(*f)()
	}
	return w.Conn.Read(p)
}

// onRead makes flush run before every read from the socket. It reports
// false when the socket has no wire: its reader's messages must then be
// flushed at once.
func (s *Socket) onRead(flush func() error) bool {
	if s.wire == nil {
		return false
	}
	s.wire.beforeRead.Store(&flush)
	return true
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	return w.Conn.Write(p)
}

// hold makes the library's writes append to the buffer until release.
func (w *wire) hold() {
	w.mu.Lock()
	w.held = true
	w.mu.Unlock()
}

// release sends what was held in one write.
func (w *wire) release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = false
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.Conn.Write(w.buf)
	if cap(w.buf) > maxKeptBatch {
		w.buf = nil
	} else {
		w.buf = w.buf[:0]
	}
	return err
}

func (w *wire) Close() error {
	w.mu.Lock()
	w.buf = nil
	w.mu.Unlock()
	return w.Conn.Close()
}

// writerBufSize is the library's buffered writer under a carrier socket.
// Every message goes through a held wire, which collects the whole
// message whatever this size, so it need not hold a message: net/http's
// 4 KB one is replaced by this small one to save memory per call.
const writerBufSize = 512

// Accept is websocket.Accept over a wire, for the relay's carrier socket.
func Accept(w http.ResponseWriter, r *http.Request, opts *websocket.AcceptOptions) (*Socket, error) {
	hw := &hijackWriter{ResponseWriter: w}
	ws, err := websocket.Accept(hw, r, opts)
	if err != nil {
		return nil, err
	}
	return &Socket{Conn: ws, wire: hw.wire}, nil
}

// hijackWriter hands the library a wire instead of the hijacked conn.
type hijackWriter struct {
	http.ResponseWriter
	wire *wire
}

func (h *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.wire = &wire{Conn: c}
	// Bytes the client sent after its request are in brw.Reader already;
	// the library keeps reading through it. Only the writer changes.
	return h.wire, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(h.wire, writerBufSize)), nil
}

func (h *hijackWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// wireSlot carries, in a dial's context, where dialWire puts the wire it
// made, so that Dial can register it with the socket.
type wireSlot struct{ w *wire }

type wireSlotKey struct{}

var wireDialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}

// checkedWireDialer is wireDialer with the outgoing address policy checked
// on every address it dials.
var checkedWireDialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: egress.Control}

func dialWire(ctx context.Context, network, addr string) (net.Conn, error) {
	return dialWireWith(ctx, wireDialer, network, addr)
}

func dialCheckedWire(ctx context.Context, network, addr string) (net.Conn, error) {
	return dialWireWith(ctx, checkedWireDialer, network, addr)
}

func dialWireWith(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	w := &wire{Conn: c}
	if slot, ok := ctx.Value(wireSlotKey{}).(*wireSlot); ok {
		slot.w = w
	}
	return w, nil
}

// wireTransport dials the model's sockets over wires (TLS, when the URL is
// wss, runs above the wire, so a batch is still one write of records).
// Upgraded connections never return to its pool.
var wireTransport = &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	DialContext:         dialWire,
	TLSHandshakeTimeout: 10 * time.Second,
}

// checkedWireTransport is wireTransport for URLs a project gave: no proxy
// (it would be dialed instead of the target, escaping the check), and
// every address checked by the outgoing address policy.
var checkedWireTransport = &http.Transport{
	DialContext:         dialCheckedWire,
	TLSHandshakeTimeout: 10 * time.Second,
}

// DialChecked is Dial for a model URL a project gave (its own provider
// account): the addresses dialed, after DNS, must pass the outgoing
// address policy, as webhook calls' must.
func DialChecked(ctx context.Context, url string, opts *websocket.DialOptions) (*Socket, *http.Response, error) {
	var o websocket.DialOptions
	if opts != nil {
		o = *opts
	}
	o.HTTPClient = &http.Client{Transport: checkedWireTransport}
	slot := &wireSlot{}
	ws, resp, err := websocket.Dial(context.WithValue(ctx, wireSlotKey{}, slot), url, &o)
	if err != nil {
		return nil, resp, err
	}
	return &Socket{Conn: ws, wire: slot.w}, resp, nil
}

// Dial is websocket.Dial over a wire, for the relay's model socket. With
// opts.HTTPClient set, it is websocket.Dial as it is, without a wire.
func Dial(ctx context.Context, url string, opts *websocket.DialOptions) (*Socket, *http.Response, error) {
	var o websocket.DialOptions
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient != nil {
		ws, resp, err := websocket.Dial(ctx, url, &o)
		if err != nil {
			return nil, resp, err
		}
		return &Socket{Conn: ws}, resp, nil
	}
	o.HTTPClient = &http.Client{Transport: wireTransport}
	slot := &wireSlot{}
	ws, resp, err := websocket.Dial(context.WithValue(ctx, wireSlotKey{}, slot), url, &o)
	if err != nil {
		return nil, resp, err
	}
	return &Socket{Conn: ws, wire: slot.w}, resp, nil
}
