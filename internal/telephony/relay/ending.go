package relay

// How a call ends: the reason carried through the call's context, End and
// EndAfterPlayback from outside, and the teardown that closes both sockets
// with a close frame once the call's context has ended.

import (
	"context"
	"errors"
	"time"
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

func end(reason EndReason, err error) error { return &errEnd{reason: reason, err: err} }

// EndAfterPlayback ends the call once the agent's current response is done
// and its audio has played (or EndDelayLimit has passed).
func (c *Call) EndAfterPlayback() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endAfterPlaybackLocked()
}

func (c *Call) endAfterPlaybackLocked() {
	if c.endRequested {
		return
	}
	c.endAfterReply = false
	if c.endTimer != nil {
		c.endTimer.Stop()
	}
	c.endRequested = true
	c.endDeadline = time.Now().Add(c.opts.EndDelayLimit)
	c.endTimer = time.AfterFunc(c.opts.EndDelayLimit, func() { c.stop(end(EndAgentHangup, nil)) })
}

// EndAfterReply ends the call once the agent has answered what it is told
// next and that answer has played: a tool that must let the agent speak
// its outcome (opt_out: "you will not be called again, goodbye") calls it
// before returning its result. Unlike EndAfterPlayback, the tool's output
// still gets its response.create; the response that starts after this
// call is the last, and the call ends as end_call ends one, once its
// audio has played. A model that never answers is hung up on after
// EndDelayLimit, and its answer is then given EndDelayLimit again.
func (c *Call) EndAfterReply() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.endRequested || c.endAfterReply {
		return
	}
	c.endAfterReply = true
	c.endTimer = time.AfterFunc(c.opts.EndDelayLimit, func() { c.stop(end(EndAgentHangup, nil)) })
}

// responseStarted notes that the model started a response; the one that
// follows EndAfterReply is the call's last.
func (c *Call) responseStarted() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.responseActive = true
	if c.endAfterReply {
		c.endAfterPlaybackLocked()
	}
}

func (c *Call) shouldEndNow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endRequested && !c.responseActive && (c.playedBytes >= c.sentBytes || time.Now().After(c.endDeadline))
}
