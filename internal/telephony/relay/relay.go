// Package relay bridges one phone call's carrier media stream (Twilio Media
// Streams, 8 kHz mu-law) to a realtime model's WebSocket (OpenAI realtime GA
// with audio/pcmu both ways). Audio passes through as the same base64 bytes:
// no decoding, no transcoding, no buffering beyond a frame.
//
// One goroutine per direction, each with its own reused buffers:
//
//	carrier -> model: media -> input_audio_buffer.append; mark echoes -> played position; dtmf -> text item; stop -> end
//	model -> carrier: output_audio.delta -> media (+ a mark per batch); speech_started -> clear + truncate;
//	                  function_call_arguments.done -> tool facility -> function_call_output + response.create
//
// Teardown: the first direction to finish cancels the call's context, which
// ends the other direction's read; then both sockets are closed at once,
// model first.
package relay

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
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

// Tools runs a tool call of the agent on this call.
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

// Run relays until the call ends and returns why. Both sockets are closed
// when it returns. When ctx ends, the reason is EndCanceled with ctx's cause.
func (c *Call) Run(ctx context.Context) Result {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.mu.Lock()
	c.cancel = cancel
	if c.endCause != nil {
		cancel(c.endCause)
	}
	c.mu.Unlock()
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
	return res
}

// End stops the call now with the given cause (kept as Result.Err).
func (c *Call) End(cause error) {
	c.stop(&errEnd{reason: EndCanceled, err: cause})
}

func (c *Call) stop(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel(cause)
	} else if c.endCause == nil {
		c.endCause = cause
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

// carrierToModel reads the carrier's messages: caller audio goes to the
// model as it is; mark echoes advance the played position.
func (c *Call) carrierToModel(ctx context.Context) error {
	var in bytes.Buffer
	out := make([]byte, 0, 512)
	for {
		if err := readInto(ctx, c.carrier, &in); err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return end(EndCarrierDisconnect, err)
		}
		msg := in.Bytes()
		switch string(stringField(msg, "event")) {
		case "media":
			start := time.Now()
			payload := mediaPayload(msg)
			if payload == nil {
				return end(EndRelayProtocolError, errors.New("media message without payload"))
			}
			c.callerFrames.Add(1)
			if !c.ready.Load() && c.holdEarly(payload) {
				continue
			}
			out = appendAudio(out[:0], payload)
			if err := c.writeModel(ctx, out); err != nil {
				return err
			}
			if c.opts.FrameLatency != nil {
				c.opts.FrameLatency.Observe(time.Since(start).Seconds())
			}
		case "mark":
			c.markEchoed(markName(msg))
			if c.shouldEndNow() {
				return end(EndAgentHangup, nil)
			}
		case "dtmf":
			if err := c.dtmf(ctx, msg); err != nil {
				return err
			}
		case "stop":
			return end(EndCallerHangup, nil)
		case "connected", "start":
		default:
			c.log.Debug("ignored carrier message", "event", string(stringField(msg, "event")))
		}
	}
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

// modelToCarrier reads the model's events: audio deltas go to the caller as
// they are; the rest drives barge-in, tools and transcripts.
func (c *Call) modelToCarrier(ctx context.Context) error {
	var in bytes.Buffer
	out := make([]byte, 0, 8192)
	for {
		if err := readInto(ctx, c.model, &in); err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return end(EndModelDisconnect, err)
		}
		msg := in.Bytes()
		switch string(stringField(msg, "type")) {
		case "response.output_audio.delta":
			delta := stringField(msg, "delta")
			if len(delta) == 0 {
				continue
			}
			var err error
			if out, err = c.audioOut(ctx, out, stringField(msg, "item_id"), delta); err != nil {
				return err
			}
		case "response.output_audio.done":
			var err error
			if out, err = c.markRest(ctx, out); err != nil {
				return err
			}
		case "input_audio_buffer.speech_started":
			if err := c.bargeIn(ctx); err != nil {
				return err
			}
		case "response.created":
			c.mu.Lock()
			c.responseActive = true
			c.mu.Unlock()
		case "response.done":
			if err := c.responseDone(ctx); err != nil {
				return err
			}
			if c.shouldEndNow() {
				return end(EndAgentHangup, nil)
			}
		case "response.function_call_arguments.done":
			if err := c.toolCall(ctx, msg); err != nil {
				return err
			}
		case "response.output_audio_transcript.done":
			c.transcript(msg, "agent", "transcript")
		case "conversation.item.input_audio_transcription.completed":
			c.transcript(msg, "caller", "transcript")
		case "session.updated":
			if err := c.sessionReady(ctx); err != nil {
				return err
			}
		case "error":
			var e struct {
				Error struct{ Type, Code, Message string }
			}
			json.Unmarshal(msg, &e)
			c.log.Warn("model error event", "type", e.Error.Type, "code", e.Error.Code, "message", e.Error.Message)
			c.opts.OnEvent(Event{Type: "error", Text: e.Error.Message, At: time.Now()})
		}
	}
}

// holdEarly keeps a caller frame that came before session.updated (the
// model would take it for 24 kHz PCM). It reports false when the session
// became ready meanwhile, so the frame is to be sent now.
func (c *Call) holdEarly(payload []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready.Load() {
		return false
	}
	if len(c.early) < 100 { // 2 s of 20 ms frames; later ones are dropped
		c.early = append(c.early, bytes.Clone(payload))
	}
	return true
}

// sessionReady runs once the model has taken the session.update: the agent
// speaks first if it should, then held caller frames go out, then caller
// audio flows directly.
func (c *Call) sessionReady(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready.Load() {
		return nil
	}
	if c.opts.SpeakFirst != nil {
		if err := c.writeModel(ctx, c.opts.SpeakFirst); err != nil {
			return err
		}
	}
	for _, p := range c.early {
		if err := c.writeModel(ctx, appendAudio(nil, p)); err != nil {
			return err
		}
	}
	c.early = nil
	c.ready.Store(true)
	return nil
}

// audioOut sends one model audio delta to the carrier, and a mark after each
// MarkInterval of audio, so that the played position is known.
func (c *Call) audioOut(ctx context.Context, out []byte, itemID, delta []byte) ([]byte, error) {
	c.mu.Lock()
	if string(itemID) != c.itemID {
		c.gen++
		c.itemID = string(itemID)
		c.sentBytes, c.markedBytes, c.playedBytes = 0, 0, 0
	}
	c.sentBytes += int64(base64.StdEncoding.DecodedLen(len(delta)) - padding(delta))
	gen, sent := c.gen, c.sentBytes
	needMark := sent-c.markedBytes >= c.opts.MarkInterval.Milliseconds()*8
	if needMark {
		c.markedBytes = sent
	}
	c.mu.Unlock()

	out = appendMedia(out[:0], c.opts.StreamSID, delta)
	if err := c.writeCarrier(ctx, out); err != nil {
		return out, err
	}
	c.agentFrames.Add(1)
	if needMark {
		out = appendMark(out[:0], c.opts.StreamSID, gen, sent)
		if err := c.writeCarrier(ctx, out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// markRest sends a mark for audio sent since the last mark.
func (c *Call) markRest(ctx context.Context, out []byte) ([]byte, error) {
	c.mu.Lock()
	gen, sent, need := c.gen, c.sentBytes, c.sentBytes > c.markedBytes
	c.markedBytes = c.sentBytes
	c.mu.Unlock()
	if !need {
		return out, nil
	}
	out = appendMark(out[:0], c.opts.StreamSID, gen, sent)
	return out, c.writeCarrier(ctx, out)
}

// markEchoed records that the carrier has played the audio before a mark.
func (c *Call) markEchoed(name []byte) {
	gen, n, ok := parseMark(name)
	if !ok {
		return
	}
	c.mu.Lock()
	if gen == c.gen && n > c.playedBytes {
		c.playedBytes = n
	}
	c.mu.Unlock()
}

// bargeIn handles the caller starting to speak: if agent audio is still
// playing, the carrier drops what it has buffered and the model is told how
// much of the item the caller actually heard.
func (c *Call) bargeIn(ctx context.Context) error {
	c.mu.Lock()
	if c.itemID == "" || c.sentBytes == 0 || c.playedBytes >= c.sentBytes {
		c.mu.Unlock()
		return nil
	}
	itemID, playedMs := c.itemID, c.playedBytes/8
	c.gen++ // echoes of marks cleared now mean dropped, not played
	c.itemID, c.sentBytes, c.markedBytes, c.playedBytes = "", 0, 0, 0
	c.mu.Unlock()

	if err := c.writeCarrier(ctx, appendClear(nil, c.opts.StreamSID)); err != nil {
		return err
	}
	truncate, _ := json.Marshal(struct {
		Type         string `json:"type"`
		ItemID       string `json:"item_id"`
		ContentIndex int    `json:"content_index"`
		AudioEndMs   int64  `json:"audio_end_ms"`
	}{"conversation.item.truncate", itemID, 0, playedMs})
	return c.writeModel(ctx, truncate)
}

// toolCall starts a tool call; audio keeps flowing while it runs.
func (c *Call) toolCall(ctx context.Context, msg []byte) error {
	var ev struct {
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	if err := json.Unmarshal(msg, &ev); err != nil {
		return end(EndRelayProtocolError, fmt.Errorf("function call event: %w", err))
	}
	args := json.RawMessage(ev.Arguments)
	if !json.Valid(args) {
		args = json.RawMessage("{}")
	}
	call := agentline.ToolCall{CallID: ev.CallID, Name: ev.Name, Arguments: args}
	if call.Name == EndCallTool {
		c.EndAfterPlayback()
		c.opts.OnEvent(Event{Type: "tool_call", Call: &call, Result: &agentline.ToolResult{CallID: call.CallID, Output: `{"ok":true}`}, At: time.Now()})
		return nil
	}
	c.mu.Lock()
	c.toolsPending++
	c.mu.Unlock()
	go c.runTool(ctx, call)
	return nil
}

func (c *Call) runTool(ctx context.Context, call agentline.ToolCall) {
	start := time.Now()
	var res agentline.ToolResult
	var err error
	if c.opts.Tools == nil {
		res = agentline.ToolResult{CallID: call.CallID, IsError: true, Output: `{"error":{"code":"unknown_tool","message":"this agent has no tools"}}`}
	} else if res, err = c.opts.Tools.Execute(ctx, call); err != nil {
		if ctx.Err() != nil {
			return
		}
		res = agentline.ToolResult{CallID: call.CallID, IsError: true, Output: `{"error":{"code":"internal","message":"the tool could not run"}}`}
		c.log.Error("tool call failed", "tool", call.Name, "call_id", call.CallID, "err", err)
	}
	c.log.Info("tool call", "tool", call.Name, "call_id", call.CallID, "is_error", res.IsError, "duration", time.Since(start))
	c.opts.OnEvent(Event{Type: "tool_call", Call: &call, Result: &res, At: time.Now()})
	item, _ := json.Marshal(struct {
		Type string `json:"type"`
		Item struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"item"`
	}{Type: "conversation.item.create", Item: struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}{"function_call_output", call.CallID, res.Output}})
	if c.writeModel(ctx, item) != nil {
		return
	}
	c.mu.Lock()
	c.toolsPending--
	c.outputsWaiting = true
	send := c.takeResponseCreateLocked()
	c.mu.Unlock()
	if send {
		c.writeModel(ctx, responseCreate)
	}
}

var responseCreate = []byte(`{"type":"response.create"}`)

// takeResponseCreateLocked reports whether a response.create is owed now: tool
// outputs are in, no tool is still running and no response is active (the
// model refuses a second active response).
func (c *Call) takeResponseCreateLocked() bool {
	if c.outputsWaiting && c.toolsPending == 0 && !c.responseActive && !c.endRequested {
		c.outputsWaiting = false
		return true
	}
	return false
}

func (c *Call) responseDone(ctx context.Context) error {
	c.mu.Lock()
	c.responseActive = false
	send := c.takeResponseCreateLocked()
	c.mu.Unlock()
	if send {
		return c.writeModel(ctx, responseCreate)
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

func (c *Call) dtmf(ctx context.Context, msg []byte) error {
	var ev struct {
		DTMF struct {
			Digit string `json:"digit"`
		} `json:"dtmf"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.DTMF.Digit == "" {
		return nil
	}
	c.opts.OnEvent(Event{Type: "dtmf", Text: ev.DTMF.Digit, At: time.Now()})
	item, _ := json.Marshal(map[string]any{
		"type": "conversation.item.create",
		"item": map[string]any{"type": "message", "role": "user",
			"content": []map[string]string{{"type": "input_text", "text": "The caller pressed " + ev.DTMF.Digit + " on the keypad."}}},
	})
	if err := c.writeModel(ctx, item); err != nil {
		return err
	}
	c.mu.Lock()
	active := c.responseActive
	c.mu.Unlock()
	if !active {
		return c.writeModel(ctx, responseCreate)
	}
	return nil
}

func (c *Call) transcript(msg []byte, role, typ string) {
	var ev struct {
		Transcript string `json:"transcript"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.Transcript == "" {
		return
	}
	c.opts.OnEvent(Event{Type: typ, Role: role, Text: ev.Transcript, At: time.Now()})
}

// mediaPayload returns the base64 payload of a carrier media message.
func mediaPayload(msg []byte) []byte {
	media, _, ok := field(msg, "media")
	if !ok {
		return nil
	}
	return stringField(media, "payload")
}

func markName(msg []byte) []byte {
	mark, _, ok := field(msg, "mark")
	if !ok {
		return nil
	}
	return stringField(mark, "name")
}

func padding(b64 []byte) int {
	n := 0
	for i := len(b64) - 1; i >= 0 && b64[i] == '='; i-- {
		n++
	}
	return n
}

// Outgoing messages are appended into reused buffers. Payloads and ids are
// base64 or carrier/model identifiers: they hold nothing JSON must escape.

func appendAudio(out, payload []byte) []byte {
	out = append(out, `{"type":"input_audio_buffer.append","audio":"`...)
	out = append(out, payload...)
	return append(out, `"}`...)
}

func appendMedia(out []byte, streamSID string, payload []byte) []byte {
	out = append(out, `{"event":"media","streamSid":"`...)
	out = append(out, streamSID...)
	out = append(out, `","media":{"payload":"`...)
	out = append(out, payload...)
	return append(out, `"}}`...)
}

// Mark names are "gen:bytes": the item generation and the audio bytes of that
// item sent before the mark.
func appendMark(out []byte, streamSID string, gen, sentBytes int64) []byte {
	out = append(out, `{"event":"mark","streamSid":"`...)
	out = append(out, streamSID...)
	out = append(out, `","mark":{"name":"`...)
	out = strconv.AppendInt(out, gen, 10)
	out = append(out, ':')
	out = strconv.AppendInt(out, sentBytes, 10)
	return append(out, `"}}`...)
}

func parseMark(name []byte) (gen, sentBytes int64, ok bool) {
	i := bytes.IndexByte(name, ':')
	if i < 0 {
		return 0, 0, false
	}
	g, err1 := strconv.ParseInt(string(name[:i]), 10, 64)
	n, err2 := strconv.ParseInt(string(name[i+1:]), 10, 64)
	return g, n, err1 == nil && err2 == nil
}

func appendClear(out []byte, streamSID string) []byte {
	out = append(out, `{"event":"clear","streamSid":"`...)
	out = append(out, streamSID...)
	return append(out, `"}`...)
}
