package relay

import (
	"context"
	"errors"
	"sync"

	"github.com/coder/websocket"
)

// A sender owns the writes to one socket. There is no writer goroutine:
// whoever flushes writes, in its own goroutine, everything queued so far in
// one batch (one write syscall over a wire), and a goroutine that flushes
// while another is writing leaves its messages to that one, which writes
// them next. A message is written at once (send), as a plain pass-through
// would, or queued to go with the next flush (queue). The relay's two
// readers queue what they relay, and the flush of that queue runs inside
// the reader's own socket's next read from the network: wire.Read, the
// net.Conn under the WebSocket library, calls it first. The library reads
// the network only once it has handed out every message its buffer held
// (wire.Read says what that relies on, and wire_test.go checks it), so the
// messages that arrived in one read leave in one write, and nothing stays
// queued while the reader waits. Under load, reads bring several messages
// and writes carry several; idle, each message is written as it comes,
// with no hand-off to another goroutine.
type sender struct {
	conn *websocket.Conn
	wire *wire       // nil: one write per message
	fail func(error) // told of the write that failed

	mu      sync.Mutex
	cond    sync.Cond // signals room, written and the end of a write
	pending *batch    // nil when nothing is queued
	writing bool      // a goroutine is writing a batch
	queued  int64     // messages queued so far
	written int64     // of those, written
	err     error     // the write that failed; nothing is sent after it
	closing bool
}

// batch is queued messages, back to back in data; ends are their ends.
type batch struct {
	data []byte
	ends []int
}

// batches keeps queue buffers between bursts: an idle socket holds none,
// so their memory is shared across calls.
var batches = sync.Pool{New: func() any { return &batch{data: make([]byte, 0, 1024), ends: make([]int, 0, 8)} }}

// maxQueued bounds the bytes waiting for one socket: past it, producers
// wait for the peer as they would if they wrote themselves.
const maxQueued = 256 << 10

var errSenderClosed = errors.New("relay: socket closing")

func newSender(sock *Socket, fail func(error)) *sender {
	s := &sender{conn: sock.Conn, wire: sock.wire, fail: fail}
	s.cond.L = &s.mu
	return s
}

// queue adds the messages fill appends to the batch (end each with
// b.end()) for the next flush; they go out together and in order. It
// returns the error of an earlier failed write, or errSenderClosed once the
// socket is closing. Past maxQueued it flushes itself, or waits while
// another goroutine writes.
func (s *sender) queue(fill func(b *batch)) (seq int64, err error) {
	s.mu.Lock()
	for s.writing && s.pending != nil && len(s.pending.data) >= maxQueued && s.err == nil && !s.closing {
		s.cond.Wait()
	}
	if s.err != nil {
		s.mu.Unlock()
		return 0, s.err
	}
	if s.closing {
		s.mu.Unlock()
		return 0, errSenderClosed
	}
	if s.pending == nil {
		s.pending = batches.Get().(*batch)
	}
	n := len(s.pending.ends)
	fill(s.pending)
	s.queued += int64(len(s.pending.ends) - n)
	seq = s.queued
	full := len(s.pending.data) >= maxQueued
	s.mu.Unlock()
	if full {
		return seq, s.flush()
	}
	return seq, nil
}

// send queues the messages and flushes: they are written before it
// returns, or by the goroutine writing meanwhile, next.
func (s *sender) send(fill func(b *batch)) (seq int64, err error) {
	if seq, err = s.queue(fill); err != nil {
		return seq, err
	}
	return seq, s.flush()
}

// put is queue when lazy, else send. Callers pass lazy rather than pick
// the method themselves: a method value called through a variable makes
// fill escape, a heap allocation per relayed frame.
func (s *sender) put(lazy bool, fill func(b *batch)) (seq int64, err error) {
	if lazy {
		return s.queue(fill)
	}
	return s.send(fill)
}

// sendMsg sends a copy of msg.
func (s *sender) sendMsg(msg []byte) error {
	_, err := s.send(func(b *batch) { b.data = append(b.data, msg...); b.end() })
	return err
}

// wait blocks until the message numbered seq (sent, not just queued) has
// been written, or writing has stopped; for messages that must reach the
// peer before another socket's.
func (s *sender) wait(seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.written < seq && s.err == nil && !(s.closing && s.pending == nil && !s.writing) {
		s.cond.Wait()
	}
	if s.written >= seq {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errSenderClosed
}

func (b *batch) end() { b.ends = append(b.ends, len(b.data)) }

// flush writes what is queued, batch after batch until none is left,
// unless another goroutine is writing: that one takes it. It returns the
// error of the write that failed (and tells fail of it, once).
func (s *sender) flush() error {
	s.mu.Lock()
	if s.writing || s.pending == nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	s.writing = true
	var err error
	for s.pending != nil && s.err == nil {
		b := s.pending
		s.pending = nil
		s.cond.Broadcast() // room for producers
		s.mu.Unlock()
		err = s.write(b)
		n := int64(len(b.ends))
		b.data, b.ends = b.data[:0], b.ends[:0]
		if cap(b.data) <= maxKeptBatch {
			batches.Put(b)
		}
		s.mu.Lock()
		if err != nil {
			s.err = err
		} else {
			s.written += n
		}
	}
	s.writing = false
	s.cond.Broadcast()
	s.mu.Unlock()
	if err != nil {
		s.fail(err)
	}
	return err
}

// write sends one batch. Even a single message goes through a held wire:
// the library may flush a large message in several pieces, and holding
// makes it one write. The context is Background: a cancelable one costs
// the library an allocation per write, and the relay stops a stuck write
// by closing the socket instead.
func (s *sender) write(b *batch) error {
	if s.wire != nil {
		s.wire.hold()
	}
	start := 0
	var err error
	for _, end := range b.ends {
		if err = s.conn.Write(context.Background(), websocket.MessageText, b.data[start:end]); err != nil {
			break
		}
		start = end
	}
	if s.wire != nil {
		if rerr := s.wire.release(); err == nil {
			err = rerr
		}
	}
	return err
}

// stop writes what is queued, refuses what comes after, and returns once
// no write is under way.
func (s *sender) stop() {
	s.mu.Lock()
	s.closing = true
	s.cond.Broadcast()
	s.mu.Unlock()
	s.flush()
	s.mu.Lock()
	for s.writing {
		s.cond.Wait()
	}
	s.mu.Unlock()
}
