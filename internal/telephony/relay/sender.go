package relay

import (
	"context"
	"errors"
	"sync"

	"github.com/coder/websocket"
)

// A sender owns the writes to one socket. Producers (the two directions and
// the tool calls) append messages to its queue and go on; its goroutine
// writes whatever has queued up meanwhile in one batch, so a burst costs one
// write syscall, not one per message. An idle socket's message is written
// at once: nothing waits for a batch to fill.
type sender struct {
	conn *websocket.Conn
	wire *wire       // nil: one write per message
	fail func(error) // told of the write that failed

	mu      sync.Mutex
	cond    sync.Cond // signals pending, room, written and stopping
	pending *batch    // nil when nothing is queued
	queued  int64     // messages queued so far
	written int64     // of those, written
	err     error     // the write that failed; nothing is sent after it
	closing bool
	done    chan struct{}
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
// wait for the peer as they did when they wrote themselves.
const maxQueued = 256 << 10

var errSenderClosed = errors.New("relay: socket closing")

func newSender(conn *websocket.Conn, fail func(error)) *sender {
	s := &sender{conn: conn, wire: wireOf(conn), fail: fail, done: make(chan struct{})}
	s.cond.L = &s.mu
	go s.run()
	return s
}

// send queues the messages fill appends to its batch (end each with
// b.end()); they go out together and in order. It returns the error of an
// earlier failed write, or errSenderClosed once the socket is closing.
func (s *sender) send(fill func(b *batch)) (seq int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.pending != nil && len(s.pending.data) >= maxQueued && s.err == nil && !s.closing {
		s.cond.Wait()
	}
	if s.err != nil {
		return 0, s.err
	}
	if s.closing {
		return 0, errSenderClosed
	}
	if s.pending == nil {
		s.pending = batches.Get().(*batch)
	}
	n := len(s.pending.ends)
	fill(s.pending)
	s.queued += int64(len(s.pending.ends) - n)
	s.cond.Broadcast()
	return s.queued, nil
}

// sendMsg queues a copy of msg.
func (s *sender) sendMsg(msg []byte) error {
	_, err := s.send(func(b *batch) { b.data = append(b.data, msg...); b.end() })
	return err
}

// wait blocks until the message numbered seq has been written, or writing
// has stopped; for messages that must reach the peer before another socket's.
func (s *sender) wait(seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.written < seq && s.err == nil && !(s.closing && s.pending == nil) {
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

func (s *sender) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for s.pending == nil && !s.closing {
			s.cond.Wait()
		}
		b := s.pending
		s.pending = nil
		s.cond.Broadcast() // room for producers
		s.mu.Unlock()
		if b == nil {
			return // closing, all written
		}
		err := s.write(b)
		s.mu.Lock()
		if err != nil {
			s.err = err
		} else {
			s.written += int64(len(b.ends))
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		b.data, b.ends = b.data[:0], b.ends[:0]
		if cap(b.data) <= maxKeptBatch {
			batches.Put(b)
		}
		if err != nil {
			s.fail(err)
			return
		}
	}
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

// stop lets the sender write what is queued, then end; it waits for that.
func (s *sender) stop() {
	s.mu.Lock()
	s.closing = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.done
}
