// Package relay bridges one phone call's carrier media stream (Twilio Media
// Streams, 8 kHz mu-law) to a realtime model's WebSocket (OpenAI realtime GA
// with audio/pcmu both ways). Audio passes through as the same base64 bytes:
// no decoding, no transcoding, no buffering beyond a frame.
//
// One goroutine per direction, each with its own reused buffers (and one per
// tool call while it runs, so that audio keeps flowing meanwhile):
//
//	carrier -> model: media -> input_audio_buffer.append; mark echoes -> played position; dtmf -> text item; stop -> end
//	model -> carrier: output_audio.delta -> media (+ a mark per batch); speech_started -> clear + truncate;
//	                  function_call_arguments.done -> tool facility -> function_call_output + response.create
//
// Teardown: the first direction to finish cancels the call's context, which
// ends the other direction's read and any tool call still running; then both
// sockets are closed at once, model first, and Run waits for those tool
// calls, so that nothing the call started outlives Run.
package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
)

// EndReason says why a call's relay ended.
type EndReason string

// End reasons recorded on the call.
const (
	EndCallerHangup       EndReason = "caller_hangup"        // the carrier sent stop
	EndCarrierDisconnect  EndReason = "carrier_disconnected" // carrier socket closed without stop
	EndModelDisconnect    EndReason = "model_disconnected"   // the model's socket failed or closed
	EndModelNotReady      EndReason = "model_not_ready"      // no session.updated in time
	EndAgentHangup        EndReason = "agent_hangup"         // the end_call tool, after the last words played
	EndCanceled           EndReason = "canceled"             // the caller's context ended (see End)
	EndRelayProtocolError EndReason = "protocol_error"       // a message the relay cannot proceed with
)

// EndCallTool is the phone-only tool the relay runs itself: the agent hangs
// up once its last words have played.
const EndCallTool = "end_call"

// Tools runs a tool call of the agent on this call. Execute must return
// soon after ctx ends (the call has ended then): Run waits for it.
type Tools interface {
	Execute(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error)
}

// Event is something worth recording about the call: a transcript line, a
// tool call, a DTMF digit or a model error.
type Event struct {
	Type   string // "transcript", "tool_call", "dtmf", "error"
	Role   string // transcript: "caller" or "agent"
	Text   string // transcript text, digit, or error message
	Call   *agentline.ToolCall
	Result *agentline.ToolResult
	At     time.Time
}

// Options configure one call's relay.
type Options struct {
	// StreamSID is the carrier stream's SID from its start message; every
	// message to the carrier carries it.
	StreamSID string
	// SessionUpdate is the complete session.update message sent to the model
	// before any audio.
	SessionUpdate []byte
	// SpeakFirst, when set, is sent to the model once the session is ready
	// (a response.create), so the agent talks before the caller.
	SpeakFirst []byte
	// Tools runs tool calls other than end_call; nil offers none.
	Tools Tools
	// OnEvent receives transcript, tool and DTMF events; it must not block.
	OnEvent func(Event)
	// Logger gets the call's log lines (with its call SID attribute).
	Logger *slog.Logger
	// MarkInterval is how much model audio is sent between marks (which tell
	// how far playback has got). Default 200 ms.
	MarkInterval time.Duration
	// ReadyTimeout bounds the wait for session.updated. Default 10 s.
	ReadyTimeout time.Duration
	// EndDelayLimit bounds how long end_call waits for the last words to play.
	// Default 15 s.
	EndDelayLimit time.Duration
	// FrameLatency, when set, observes how long each caller frame took from
	// read to written to the model, in seconds.
	FrameLatency interface{ Observe(float64) }
	// BeforeCarrierClose, when set, runs once the call has ended and the
	// model's socket is closed, before the carrier's is: closing the
	// carrier's socket hangs up (the TwiML after <Connect> is <Hangup/>), so
	// this is the last moment to redirect the live call, for example to
	// an apology after the model failed.
	BeforeCarrierClose func(Result)
}

// Result is how the relay ended.
type Result struct {
	Reason EndReason
	Err    error // the failure behind the reason, if any
	// Frames counted in each direction.
	CallerFrames, AgentFrames int64
}

// Call is one relayed call. Create it with New and run it with Run; End and
// EndAfterPlayback may be called from any goroutine.
type Call struct {
	carrier, model *websocket.Conn
	opts           Options
	log            *slog.Logger

	ready atomic.Bool // session.updated has come; caller audio flows

	// Playback state. Audio is counted in mu-law bytes: 8 bytes are 1 ms.
	// mu is held only to read and update it, never across a socket write
	// or a callback: one stalled peer must not stall the other direction.
	mu             sync.Mutex
	gen            int64  // bumps on every new item and on barge-in; marks of older gens are stale
	itemID         string // the item whose audio is being sent
	sentBytes      int64  // of itemID, sent to the carrier
	markedBytes    int64  // of itemID, covered by the last mark sent
	playedBytes    int64  // of itemID, covered by the last mark echoed
	responseActive bool
	toolsPending   int
	outputsWaiting bool     // tool outputs sent, response.create still owed
	early          [][]byte // caller frames that came before session.updated
	endRequested   bool
	endDeadline    time.Time
	endTimer       *time.Timer
	cancel         context.CancelCauseFunc // of the running call; nil before Run
	endCause       error                   // End before Run

	callerFrames, agentFrames atomic.Int64
	toolRuns                  sync.WaitGroup // the runTool goroutines, which Run waits for
}

// New prepares the relay of one call between two open sockets. The carrier
// socket must already have delivered its connected and start messages.
func New(carrier, model *websocket.Conn, opts Options) *Call {
	if opts.MarkInterval <= 0 {
		opts.MarkInterval = 200 * time.Millisecond
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 10 * time.Second
	}
	if opts.EndDelayLimit <= 0 {
		opts.EndDelayLimit = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.OnEvent == nil {
		opts.OnEvent = func(Event) {}
	}
	return &Call{carrier: carrier, model: model, opts: opts, log: opts.Logger}
}

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

// Run relays until the call ends and returns why. Both sockets are closed,
// and every tool call it started has returned, when it returns. When ctx
// ends, the reason is EndCanceled with ctx's cause.
func (c *Call) Run(ctx context.Context) Result {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.mu.Lock()
	c.cancel = cancel
	endCause := c.endCause
	c.mu.Unlock()
	if endCause != nil {
		cancel(endCause)
	}
	defer func() {
		c.mu.Lock()
		c.cancel = nil
		if c.endTimer != nil {
			c.endTimer.Stop()
		}
		c.mu.Unlock()
	}()
	if err := c.model.Write(ctx, websocket.MessageText, c.opts.SessionUpdate); err != nil {
		res := Result{Reason: EndModelDisconnect, Err: fmt.Errorf("send session.update: %w", err)}
		c.closeAll(res)
		return res
	}
	readyTimer := time.AfterFunc(c.opts.ReadyTimeout, func() {
		if !c.ready.Load() {
			c.stop(end(EndModelNotReady, errors.New("no session.updated from the model")))
		}
	})
	defer readyTimer.Stop()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); cancel(c.carrierToModel(ctx)) }()
	go func() { defer wg.Done(); cancel(c.modelToCarrier(ctx)) }()
	wg.Wait()

	res := Result{CallerFrames: c.callerFrames.Load(), AgentFrames: c.agentFrames.Load()}
	var end *errEnd
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &end):
		res.Reason, res.Err = end.reason, end.err
	default:
		res.Reason, res.Err = EndCanceled, cause
	}
	c.closeAll(res)
	c.toolRuns.Wait() // their ctx has ended: a late result is recorded, not sent
	return res
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

// closeAll closes both sockets at once, model first. No close handshake is
// awaited: the first direction to end has already canceled the other's read,
// so nobody would read the peer's answer, and a peer that no longer answers
// must not hold the call. Closing the carrier's socket ends the call: the
// TwiML after <Connect> is <Hangup/>.
func (c *Call) closeAll(res Result) {
	c.model.CloseNow()
	if c.opts.BeforeCarrierClose != nil {
		c.opts.BeforeCarrierClose(res)
	}
	c.carrier.CloseNow()
}

func end(reason EndReason, err error) error { return &errEnd{reason: reason, err: err} }

// readInto reads one message of conn into buf, reusing its storage.
func readInto(ctx context.Context, conn *websocket.Conn, buf *bytes.Buffer) error {
	_, r, err := conn.Reader(ctx)
	if err != nil {
		return err
	}
	buf.Reset()
	_, err = buf.ReadFrom(r)
	return err
}

func (c *Call) writeModel(ctx context.Context, msg []byte) error {
	if err := c.model.Write(ctx, websocket.MessageText, msg); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return end(EndModelDisconnect, err)
	}
	return nil
}

func (c *Call) writeCarrier(ctx context.Context, msg []byte) error {
	if err := c.carrier.Write(ctx, websocket.MessageText, msg); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return end(EndCarrierDisconnect, err)
	}
	return nil
}

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
