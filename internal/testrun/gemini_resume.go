package testrun

// A Live connection lasts about ten minutes; the service says goAway
// (with the time left) before it closes one, and a new connection whose
// setup carries the last resumable handle (sessionResumptionUpdate)
// continues the session. A phone call switches at once, since its audio
// never pauses (telephony/relay's gemini_resume.go); a test run's session
// is text in turns, so it switches between turns, where the service's
// handle covers every turn played so far:
//
//  1. goAway, read at any time by the connection's own reader, marks the
//     session as going away; a turn under way finishes on the old
//     connection, which the service keeps for the time left;
//  2. before the next message, the session waits (up to handleWait) for a
//     resumable handle given after the last turnComplete, opens a new
//     connection resuming from it, and closes the old one (1000);
//  3. a connection that ends before a message's turnComplete (the time
//     ran out, or the service dropped it) is resumed the same way at once
//     and the message sent again: the last resumable handle predates it,
//     since the service gives none while the model answers or runs tools.
//
// Which handle counts (resumable, not empty) and the resuming setup are
// geminilive's, shared with the relay.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/provider/geminilive"
)

// errConnEnded is the session's connection closing or failing.
var errConnEnded = errors.New("the Live connection ended")

// handleWait bounds the wait, after a goAway, for the handle that covers
// the last turn.
const handleWait = 5 * time.Second

// resumeState is what a session knows of its resumption.
type resumeState struct {
	handle    string // the last resumable handle
	fresh     bool   // handle came after the last turnComplete: it covers every turn
	goingAway bool   // the current connection got a goAway
	resumed   int    // connections that took over the session
}

// liveConn is one Live connection of a session, read by its own goroutine
// so that a goAway between turns is seen when it comes.
type liveConn struct {
	ws   *websocket.Conn
	msgs chan []byte // closed once reading ends
	stop chan struct{}
	once sync.Once
	err  error // why reading ended, set before msgs is closed
}

func newLiveConn(ws *websocket.Conn) *liveConn {
	c := &liveConn{ws: ws, msgs: make(chan []byte, 64), stop: make(chan struct{})}
	go c.read()
	return c
}

func (c *liveConn) read() {
	defer close(c.msgs)
	for {
		_, msg, err := c.ws.Read(context.Background())
		if err != nil {
			c.err = err
			return
		}
		select {
		case c.msgs <- msg:
		case <-c.stop:
			c.err = errors.New("closed")
			return
		}
	}
}

func (c *liveConn) close(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		close(c.stop)
		c.ws.Close(code, reason)
	})
}

// next is the current connection's next server message, or errConnEnded.
func (s *liveSession) next(ctx context.Context) (geminilive.ServerMessage, error) {
	for {
		select {
		case msg, ok := <-s.conn.msgs:
			if !ok {
				return geminilive.ServerMessage{}, fmt.Errorf("the agent's Live session: %w: %w", errConnEnded, s.conn.err)
			}
			if m, ok := s.take(msg); ok {
				return m, nil
			}
		case <-ctx.Done():
			return geminilive.ServerMessage{}, context.Cause(ctx)
		}
	}
}

// take reads one server message and keeps what resumption needs of it.
func (s *liveSession) take(msg []byte) (geminilive.ServerMessage, bool) {
	var m geminilive.ServerMessage
	if json.Unmarshal(msg, &m) != nil {
		return m, false
	}
	if h := m.SessionResumptionUpdate.Handle(); h != "" {
		s.resume.handle, s.resume.fresh = h, true
	}
	if m.GoAway != nil && !s.resume.goingAway {
		s.resume.goingAway = true
		s.log.Info("the agent's Live connection is going away; the session resumes on a new one before the next message",
			"time_left", m.GoAway.TimeLeft)
	}
	return m, true
}

// turnComplete marks the handles so far as older than the last turn.
func (r *resumeState) turnComplete() { r.fresh = false }

// beforeTurn moves the session to a new connection when the current one
// is going away or has ended. A switch that fails while the old
// connection is still open leaves the session on it, as a call stays on
// its old connection, for the time it has left.
func (s *liveSession) beforeTurn(ctx context.Context) error {
	ended := s.drain()
	if !ended && !s.resume.goingAway {
		return nil
	}
	if !ended && !s.resume.fresh {
		ended = s.awaitHandle(ctx)
	}
	err := s.reconnect(ctx)
	if err != nil && !ended && ctx.Err() == nil {
		s.log.Warn("could not resume the agent's Live session on a new connection; the scenario goes on on the old one", "err", err)
		s.resume.goingAway = false
		return nil
	}
	return err
}

// drain takes the messages that came between turns; true when the
// connection has ended.
func (s *liveSession) drain() bool {
	for {
		select {
		case msg, ok := <-s.conn.msgs:
			if !ok {
				return true
			}
			s.take(msg)
		default:
			return false
		}
	}
}

// awaitHandle reads until a handle covering the last turn comes, the
// connection ends (true), or handleWait passes.
func (s *liveSession) awaitHandle(ctx context.Context) bool {
	t := time.NewTimer(handleWait)
	defer t.Stop()
	for !s.resume.fresh {
		select {
		case msg, ok := <-s.conn.msgs:
			if !ok {
				return true
			}
			s.take(msg)
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return false
}

// reconnect opens a new connection resuming the session from the last
// handle and retires the current one.
func (s *liveSession) reconnect(ctx context.Context) error {
	h := s.resume.handle
	if h == "" {
		return errors.New("the agent's Live connection is going away and the service gave no resumable session handle")
	}
	if !s.resume.fresh {
		s.log.Warn("resuming the agent's Live session from a handle older than its last turn, which the model may not remember")
	}
	ws, err := openLive(ctx, s.hc, s.creds, s.setup.Resuming(h), s.audio)
	if err != nil {
		return fmt.Errorf("resuming the agent's Live session: %w", err)
	}
	s.conn.close(websocket.StatusNormalClosure, "go_away")
	s.conn = newLiveConn(ws)
	s.resume.goingAway = false
	s.resume.resumed++
	s.log.Info("the agent's Live session resumed on a new connection", "resumed", s.resume.resumed)
	return nil
}
