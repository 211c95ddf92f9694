package livecall

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentline/agentline/internal/telephony/relay"
)

// liveCalls are the calls relayed by this instance, by call SID, so an API
// hang-up and shutdown can end them: the HTTP server does not track hijacked
// connections.
type liveCalls struct {
	mu    sync.Mutex
	calls map[string]*liveCall
	// draining: no new calls are taken; streams of calls already answered
	// still are. closing: no stream is taken at all.
	draining, closing bool
	running           int // stream handlers in flight
	handlers          sync.WaitGroup
	// pending are calls answered here whose stream has not come yet, by
	// stream token ref, with when to stop waiting for it: a drain waits
	// for them too, so that a call answered just before SIGTERM is kept.
	pending map[string]time.Time
}

// How long after its answer a call's stream is waited for by a drain: the
// carrier opens an inbound call's stream at once; an outbound one rings
// for up to 60 s first.
const (
	inboundStreamGrace  = 10 * time.Second
	outboundStreamGrace = 75 * time.Second
)

// expect records that the call with this stream token ref was answered and
// its stream should come before until.
func (l *liveCalls) expect(ref string, until, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[string]time.Time{}
	}
	for r, u := range l.pending { // streams that never came
		if !u.After(now) {
			delete(l.pending, r)
		}
	}
	l.pending[ref] = until
}

// settle stops waiting for the stream of ref: it came, or never will.
func (l *liveCalls) settle(ref string) {
	l.mu.Lock()
	delete(l.pending, ref)
	l.mu.Unlock()
}

// busy counts the streams running and the ones still awaited at now.
func (l *liveCalls) busy(now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.running
	for _, until := range l.pending {
		if until.After(now) {
			n++
		}
	}
	return n
}

// enter counts a stream handler in, unless shutdown has begun.
func (l *liveCalls) enter() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	l.running++
	l.handlers.Add(1)
	return true
}

func (l *liveCalls) leave() {
	l.mu.Lock()
	l.running--
	l.mu.Unlock()
	l.handlers.Done()
}

func (l *liveCalls) isDraining() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.draining
}

func (l *liveCalls) add(sid string, c *relay.Call) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	if l.calls == nil {
		l.calls = map[string]*liveCall{}
	}
	if _, dup := l.calls[sid]; dup {
		return false
	}
	l.calls[sid] = &liveCall{relay: c, recorded: make(chan struct{})}
	return true
}

// liveCall is a call relayed here: its relay, and recorded, closed once
// the relay's end record is written (remove).
type liveCall struct {
	relay    *relay.Call
	recorded chan struct{}
}

func (l *liveCalls) remove(sid string) {
	l.mu.Lock()
	if lc := l.calls[sid]; lc != nil {
		close(lc.recorded)
	}
	delete(l.calls, sid)
	l.mu.Unlock()
}

// end ends the call's relay here, if it runs here.
func (l *liveCalls) end(sid string, cause error) {
	l.mu.Lock()
	lc := l.calls[sid]
	l.mu.Unlock()
	if lc != nil {
		lc.relay.End(cause)
	}
}

// Drain makes this instance take no new calls: the inbound webhook answers
// with a busy signal (<Reject reason="busy"/>: not billed, and the caller's
// redial reaches an instance that is not draining) and outbound calls answer
// 503 unavailable. Calls already answered go on, streams included.
func (h *Handler) Drain() {
	h.live.mu.Lock()
	h.live.draining = true
	h.live.mu.Unlock()
}

// LiveCalls counts the media streams this instance is handling.
func (h *Handler) LiveCalls() int {
	h.live.mu.Lock()
	defer h.live.mu.Unlock()
	return h.live.running
}

// WaitCalls waits until no media stream runs here and none is awaited for
// a call answered here, or ctx ends.
func (h *Handler) WaitCalls(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for h.live.busy(h.now()) > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d calls still live or awaited: %w", h.live.busy(h.now()), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// Draining reports whether this instance has stopped taking new calls,
// for call management to refuse an outbound call it could not keep.
func (h *Handler) Draining() bool { return h.live.isDraining() }

// ExpectOutbound records that an outbound call with this stream token ref
// is being placed from here: a drain waits for its stream, which may come
// before the carrier has even answered the call request.
func (h *Handler) ExpectOutbound(ref string) {
	h.live.expect(ref, h.now().Add(outboundStreamGrace), h.now())
}

// Settle stops waiting for the stream of ref: the carrier refused the call,
// so it never comes.
func (h *Handler) Settle(ref string) { h.live.settle(ref) }

// AwaitRecorded waits, at most within, for the end record of the call
// callSID if this instance relays it now, and reports whether the call
// has no relay running here any more. The carrier's final status callback
// usually comes as the call's relay ends: waiting for the relay's record,
// which brings the call's log, lets the callback find the end written
// (one read) instead of writing it first and the relay after.
func (h *Handler) AwaitRecorded(ctx context.Context, callSID string, within time.Duration) bool {
	h.live.mu.Lock()
	lc := h.live.calls[callSID]
	h.live.mu.Unlock()
	if lc == nil {
		return true
	}
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-lc.recorded:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// EndByAPI stops the relay of a call hung up through the API at once, if it
// runs here, rather than when the carrier gets to closing its stream.
func (h *Handler) EndByAPI(callSID string) { h.live.end(callSID, errEndedByAPI) }

// EndCalls ends every call this instance relays and waits, until ctx ends,
// for their records to be written. New streams are refused from now on.
// http.Server.Shutdown does not wait for hijacked connections, so the app
// calls this after it.
func (h *Handler) EndCalls(ctx context.Context) error {
	l := h.live
	l.mu.Lock()
	l.closing = true
	for _, lc := range l.calls {
		lc.relay.End(errShutdown)
	}
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.handlers.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("calls still ending: %w", ctx.Err())
	}
}
