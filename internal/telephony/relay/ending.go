package relay

// How a call ends: the reason carried through the call's context, End and
// EndAfterPlayback from outside, and the teardown that closes both sockets
// with a close frame once the call's context has ended.

import (
	"context"
	"errors"
	"time"

	"github.com/coder/websocket"
)

// errEnd carries an end reason through context cancellation.
type errEnd struct {
	reason EndReason
	err    error
}

func (e *errEnd) Error() string {
	if e.err != nil {
		return string(e.reason) + ": " + e.err.Error()
	}
	return string(e.reason)
}

func (e *errEnd) Unwrap() error { return e.err }

// result is how the call whose context has ended ended.
func result(ctx context.Context) Result {
	var e *errEnd
	cause := context.Cause(ctx)
	if errors.As(cause, &e) {
		return Result{Reason: e.reason, Err: e.err}
	}
	return Result{Reason: EndCanceled, Err: cause}
}

// End stops the call now with the given cause (kept as Result.Err).
func (c *Call) End(cause error) {
	c.stop(&errEnd{reason: EndCanceled, err: cause})
}

// stop ends the running call with cause, or the call Run is yet to start.
// The cancel runs after the lock is released: it wakes the socket reads.
func (c *Call) stop(cause error) {
	c.mu.Lock()
	cancel := c.cancel
	if cancel == nil && c.endCause == nil {
		c.endCause = cause
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// closeTimeout bounds each socket's closing: sending what is queued, the
// close frame, and waiting for the peer's. A peer that no longer answers
// must not hold the call.
const closeTimeout = time.Second

// closeAll closes both sockets with a close frame, model first. Closing
// the carrier's socket ends the call (the TwiML after <Connect> is
// <Hangup/>), so BeforeCarrierClose runs between the two.
func (c *Call) closeAll(res Result) {
	code, reason := closeStatus(res.Reason)
	closeSocket(c.model, c.modelOut, code, reason)
	if c.opts.BeforeCarrierClose != nil {
		c.opts.BeforeCarrierClose(res)
	}
	closeSocket(c.carrier, c.carrierOut, code, reason)
}

// closeStatus is the close frame for an ending: 1000 when the call ended
// as calls do, 1011 when something failed. The reason is the end reason,
// never an error's text.
func closeStatus(r EndReason) (websocket.StatusCode, string) {
	switch r {
	case EndCallerHangup, EndAgentHangup, EndCanceled, EndCarrierDisconnect:
		return websocket.StatusNormalClosure, string(r)
	default:
		return websocket.StatusInternalError, string(r)
	}
}

// closeSocket lets out write what is queued, then closes conn with a close
// frame, waiting for the peer's until closeTimeout. Over a wire, a deadline
// on it bounds all of that; otherwise a timer cuts a write stuck on a
// peer that stopped reading, and the library bounds its handshake (5 s).
func closeSocket(sock *Socket, out *sender, code websocket.StatusCode, reason string) {
	conn := sock.Conn
	if w := sock.wire; w != nil {
		w.SetDeadline(time.Now().Add(closeTimeout))
		out.stop()
		conn.Close(code, reason)
		return
	}
	cut := time.AfterFunc(closeTimeout, func() { conn.CloseNow() })
	out.stop()
	cut.Stop()
	conn.Close(code, reason)
}

func end(reason EndReason, err error) error { return &errEnd{reason: reason, err: err} }

// EndAfterPlayback ends the call once the agent's current response is done
// and its audio has played (or EndDelayLimit has passed).
func (c *Call) EndAfterPlayback() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.endRequested {
		return
	}
	c.endRequested = true
	c.endDeadline = time.Now().Add(c.opts.EndDelayLimit)
	c.endTimer = time.AfterFunc(c.opts.EndDelayLimit, func() { c.stop(end(EndAgentHangup, nil)) })
}

func (c *Call) shouldEndNow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endRequested && !c.responseActive && (c.playedBytes >= c.sentBytes || time.Now().After(c.endDeadline))
}
