// Package relay bridges one phone call's carrier media stream (Twilio Media
// Streams, 8 kHz mu-law) to a realtime model's WebSocket (OpenAI realtime GA
// with audio/pcmu both ways). Audio passes through as the same base64 bytes:
// no decoding, no transcoding, no buffering beyond a frame.
//
// One goroutine reads each socket, and one runs per tool call while it
// runs, so that audio keeps flowing meanwhile. No goroutine is given to
// writing: each socket's writes go through its sender, and whichever
// goroutine flushes the sender writes what has queued up, in one write.
// Each reader queues what it relays and flushes it from inside its own
// socket's next read from the network (wire.Read), so the messages that
// arrived together leave together:
//
//	carrier -> model: media -> input_audio_buffer.append; mark echoes -> played position; dtmf -> text item; stop -> end
//	model -> carrier: output_audio.delta -> media (+ a mark per batch); speech_started -> clear + truncate;
//	                  function_call_arguments.done -> tool facility -> function_call_output + response.create
//
// Teardown: the first direction to finish cancels the call's context, which
// ends any tool call still running and closes both sockets, model first,
// each with a close frame (1000 for a call that ended as calls do, 1011 for
// a failure) within closeTimeout; closing ends the other direction's read.
// Run waits for the readers, the senders and the tool calls, so that
// nothing the call started outlives Run.
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
	"go.opentelemetry.io/otel/trace"

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
// tool call, a DTMF digit, a model error or a turn's latency.
type Event struct {
	Type   string // "transcript", "tool_call", "dtmf", "error", "turn_latency"
	Role   string // transcript: "caller" or "agent"
	Text   string // transcript text, digit, or error message
	Call   *agentline.ToolCall
	Result *agentline.ToolResult
	// Latency is a turn_latency's: from the caller's end of speech to the
	// first audio of the agent's answer written to the carrier.
	Latency time.Duration
	At      time.Time
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
	// read to queued for the model's socket, in seconds.
	FrameLatency interface{ Observe(float64) }
	// BeforeCarrierClose, when set, runs once the call has ended and the
	// model's socket is closed, before the carrier's is: closing the
	// carrier's socket hangs up (the TwiML after <Connect> is <Hangup/>), so
	// this is the last moment to redirect the live call, for example to
	// an apology after the model failed.
	BeforeCarrierClose func(Result)
	// Recorder, when set, gets both sides' audio as it passes (the call is
	// recorded). Nil costs the relay one comparison per frame.
	Recorder Recorder
	// Gemini, when set, makes the model a Gemini Live connection: its
	// Setup replaces SessionUpdate, and SpeakFirst is a geminilive.TextInput.
	Gemini *GeminiOptions
	// Tracer, when set (tracing is on), gets a span per model turn with
	// its tool calls inside (trace.go), children of the span in Run's ctx;
	// nil costs a nil check per turn, nothing per frame.
	Tracer trace.Tracer
}

// Recorder records a call's audio. The relay calls it on its hot path, so
// its methods must return at once (recording.Recorder copies into a
// bounded buffer and never waits for its writer), and must not keep the
// payload slices, which the relay reuses.
type Recorder interface {
	// Caller gets a caller frame (base64 mu-law) and its media.timestamp
	// (ms since the stream started; -1 when the carrier sent none).
	Caller(payloadB64 []byte, timestampMs int64)
	// Agent gets an agent audio delta (base64 mu-law) as it is queued for
	// the carrier.
	Agent(payloadB64 []byte)
	// Clear says the carrier was told to drop the agent audio it has not
	// played yet (barge-in).
	Clear()
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
	carrier, model *Socket
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
	endAfterReply  bool // EndAfterReply: the next response to start is the last
	endDeadline    time.Time
	endTimer       *time.Timer
	cancel         context.CancelCauseFunc // of the running call; nil before Run
	endCause       error                   // End before Run

	carrierOut, modelOut *sender // each socket's writes, from Run on
	// carrierLazy and modelLazy: that socket's reader may queue what it
	// relays, flushed before its next socket read (onRead), from Run on.
	carrierLazy, modelLazy bool

	callerFrames, agentFrames atomic.Int64
	toolRuns                  sync.WaitGroup // the runTool goroutines, which Run waits for

	gem *geminiSide // nil for an OpenAI realtime model

	clock         turnClock // maps the model's speech_stopped to the relay's clock
	callerTurnEnd int64     // under mu: unix ns the caller's turn ended, awaiting the answer's first audio; 0 none
	// The model's open turn and its span's context (trace.go): the model's
	// reader alone uses them.
	turn    trace.Span
	turnCtx context.Context
	turns   int
}

// New prepares the relay of one call between two open sockets. The carrier
// socket must already have delivered its connected and start messages.
func New(carrier, model *Socket, opts Options) *Call {
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
	c := &Call{carrier: carrier, model: model, opts: opts, log: opts.Logger}
	c.clock.init()
	if opts.Gemini != nil {
		c.gem = newGeminiSide(c, *opts.Gemini)
	}
	return c
}

// Run relays until the call ends and returns why. Both sockets are closed,
// and every tool call it started has returned, when it returns. When ctx
// ends, the reason is EndCanceled with ctx's cause.
//
// Sockets are read and written with context.Background(): a cancelable
// context costs coder/websocket a context.AfterFunc record per Read and
// Write (most of the relay's garbage). The end of the call reaches the
// blocked reads another way: the first direction to end (or End, or ctx)
// cancels the call's context, which closes both sockets with a close frame.
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
	first, modelToCarrier := c.opts.SessionUpdate, c.modelToCarrier
	if g := c.gem; g != nil {
		lc := g.connect(c.model)
		g.cur.Store(lc)
		c.modelOut = lc.out
		first, modelToCarrier = g.opts.Setup(""), c.geminiToCarrier
		defer g.resumes.Wait() // after the sockets closed: a switch-over in flight has ended
	} else {
		c.modelOut = newSender(c.model, func(err error) { c.stop(end(EndModelDisconnect, err)) })
	}
	c.carrierOut = newSender(c.carrier, func(err error) { c.stop(end(EndCarrierDisconnect, err)) })
	if c.gem != nil {
		c.carrierLazy = c.carrier.onRead(c.gem.flush) // the current connection's
	} else {
		c.carrierLazy = c.carrier.onRead(c.modelOut.flush)
	}
	c.modelLazy = c.model.onRead(c.carrierOut.flush)
	var res Result
	closed := make(chan struct{})
	context.AfterFunc(ctx, func() {
		res = result(ctx)
		c.closeAll(res)
		close(closed)
	})
	if err := c.modelOut.sendMsg(first); err != nil {
		cancel(end(EndModelDisconnect, fmt.Errorf("send the session's setup: %w", err)))
	}
	readyTimer := time.AfterFunc(c.opts.ReadyTimeout, func() {
		if !c.ready.Load() {
			c.stop(end(EndModelNotReady, errors.New("the model did not take the session's setup in time")))
		}
	})
	defer readyTimer.Stop()
	done := make(chan struct{})
	go func() { defer close(done); cancel(modelToCarrier(ctx)) }()
	cancel(c.carrierToModel(ctx))
	<-done
	c.turnEnd() // the model's reader has returned: a turn cut short ends here
	<-closed
	res.CallerFrames, res.AgentFrames = c.callerFrames.Load(), c.agentFrames.Load()
	c.toolRuns.Wait() // their ctx has ended: a late result is recorded, not sent
	return res
}

// readBufs keeps read buffers between messages: a call holds one only
// while it handles a message, so calls share them instead of each keeping
// two for its whole length.
var readBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxKeptRead bounds a read buffer put back for reuse.
const maxKeptRead = 64 << 10

// readMsg reads one message of conn into a buffer from readBufs, which
// the caller gives back with putRead once done with it.
func readMsg(conn *websocket.Conn) (*bytes.Buffer, error) {
	_, r, err := conn.Reader(context.Background())
	if err != nil {
		return nil, err
	}
	buf := readBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if _, err = buf.ReadFrom(r); err != nil {
		putRead(buf)
		return nil, err
	}
	return buf, nil
}

func putRead(buf *bytes.Buffer) {
	if buf.Cap() <= maxKeptRead {
		readBufs.Put(buf)
	}
}

// sendErr turns a failed send (or read) into the call's end: the call's
// own cause once it has ended, else the socket's disconnect.
func sendErr(ctx context.Context, err error, reason EndReason) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return end(reason, err)
}

// relayFrom reads s's messages and hands each to handle until handle
// fails or the read does, which ends the call as reason: the one read
// loop of both directions (carrierToModel, modelToCarrier).
func relayFrom(ctx context.Context, s *Socket, reason EndReason, handle func(context.Context, []byte) error) error {
	for {
		in, err := readMsg(s.Conn)
		if err != nil {
			return sendErr(ctx, err, reason)
		}
		err = handle(ctx, in.Bytes())
		putRead(in)
		if err != nil {
			return err
		}
	}
}

// queue queues msg on out, unless the call has ended; a failed send ends
// the call as reason.
func queue(ctx context.Context, out *sender, msg []byte, reason EndReason) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err := out.sendMsg(msg); err != nil {
		return sendErr(ctx, err, reason)
	}
	return nil
}

// writeModel queues msg for the model, unless the call has ended.
func (c *Call) writeModel(ctx context.Context, msg []byte) error {
	if c.gem != nil {
		return c.gem.write(ctx, msg)
	}
	return queue(ctx, c.modelOut, msg, EndModelDisconnect)
}

// writeCarrier queues msg for the carrier, unless the call has ended.
func (c *Call) writeCarrier(ctx context.Context, msg []byte) error {
	return queue(ctx, c.carrierOut, msg, EndCarrierDisconnect)
}
