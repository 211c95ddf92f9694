package relay

// The Gemini Live side of a call. Where the OpenAI side passes the line's
// mu-law through, Gemini takes and gives 16-bit PCM, so each caller frame is
// decoded to 8 kHz PCM (g711.AppendPCM16LE) and sent as realtimeInput
// audio/pcm;rate=8000, and the model's 24 kHz PCM is resampled to 8 kHz
// mu-law (resample.Down3) and cut into the carrier's 160-byte frames. The
// rest maps message for message onto what the OpenAI side does:
//
//	setupComplete            -> session.updated (speak first, held frames)
//	serverContent.modelTurn  -> output_audio.delta -> media + mark
//	serverContent.interrupted -> speech_started: clear (no truncate: the service keeps what was heard)
//	serverContent.turnComplete -> response.done (end_call, transcripts)
//	toolCall                 -> function_call_arguments.done -> toolResponse
//	goAway + resumption      -> a new connection resuming the session (gemini_resume.go)

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentline/agentline/internal/g711"
	"github.com/agentline/agentline/internal/resample"
)

// GeminiOptions make a call's model side Gemini Live instead of OpenAI
// realtime.
type GeminiOptions struct {
	// Setup returns the setup message; a handle, when not empty, resumes
	// that session (sessionResumption.handle).
	Setup func(handle string) []byte
	// Dial opens another Live connection for the call, when the service
	// says goAway; nil ends the call with the connection instead.
	Dial func(ctx context.Context) (*Socket, error)
}

// liveConn is one Live connection of a call and its writes.
type liveConn struct {
	sock *Socket
	out  *sender
}

// geminiSide is a call's Gemini state. The model's reader alone touches
// the audio and transcript fields; mu guards the rest.
type geminiSide struct {
	c    *Call
	opts GeminiOptions
	cur  atomic.Pointer[liveConn]

	// Caller frames: decoded and re-encoded under convMu, since the held
	// frames of a switch-over may be sent while the carrier's reader sends.
	convMu     sync.Mutex
	mulaw, pcm []byte

	// Model audio, on the model's reader.
	in       []byte // a chunk's PCM
	pend     []byte // mu-law short of a whole frame
	frameB64 []byte
	down     resample.Down3
	turn     int64
	turnID   []byte
	inText   strings.Builder
	outText  strings.Builder

	voice voiceEnd // the caller's end of speech, for turn latency

	mu        sync.Mutex
	handle    string // the last resumable handle
	resuming  bool   // a goAway's switch-over is under way
	switching bool   // caller frames are held for the new connection
	held      [][]byte
	closed    bool            // the call is closing its connection: no switch now
	canceled  map[string]bool // tool calls the model withdrew
	resumes   sync.WaitGroup
}

// geminiFrame is one carrier frame: 20 ms of 8 kHz mu-law.
const geminiFrame = 160

// maxHeldSwitch bounds the caller frames held during a switch-over (5 s).
const maxHeldSwitch = 250

func newGeminiSide(c *Call, opts GeminiOptions) *geminiSide {
	g := &geminiSide{c: c, opts: opts, canceled: map[string]bool{}}
	g.turnID = append(g.turnID, "turn1"...)
	g.turn = 1
	return g
}

// connect makes sock the call's connection, with a sender whose failure
// ends the call only while sock is the current one.
func (g *geminiSide) connect(sock *Socket) *liveConn {
	lc := &liveConn{sock: sock}
	lc.out = newSender(sock, func(err error) {
		if g.cur.Load() == lc {
			g.c.stop(end(EndModelDisconnect, err))
		}
	})
	return lc
}

// flush writes what the carrier's reader queued for the model.
func (g *geminiSide) flush() error { return g.cur.Load().out.flush() }

// write sends msg on the current connection; one that was retired while
// it was being sent is retried on its successor.
func (g *geminiSide) write(ctx context.Context, msg []byte) error {
	for {
		lc := g.cur.Load()
		err := queue(ctx, lc.out, msg, EndModelDisconnect)
		if err == nil || g.cur.Load() == lc {
			return err
		}
	}
}

// sendFrame sends one caller frame (base64 mu-law), or holds it while the
// call switches connections.
func (g *geminiSide) sendFrame(ctx context.Context, payload []byte, lazy bool) error {
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		g.mu.Lock()
		if g.switching {
			if len(g.held) < maxHeldSwitch {
				g.held = append(g.held, bytes.Clone(payload))
			}
			g.mu.Unlock()
			return nil
		}
		lc := g.cur.Load()
		g.mu.Unlock()
		_, err := lc.out.put(lazy, func(b *batch) { b.data = g.appendAudio(b.data, payload); b.end() })
		if err == nil {
			return nil
		}
		if g.cur.Load() == lc {
			return sendErr(ctx, err, EndModelDisconnect)
		}
	}
}

// appendAudio appends the realtimeInput of one caller frame: mu-law to
// 16-bit PCM, 8 kHz as the line carries it (the service resamples input
// of any rate its MIME type names).
func (g *geminiSide) appendAudio(out, payload []byte) []byte {
	g.convMu.Lock()
	defer g.convMu.Unlock()
	var err error
	if g.mulaw, err = base64.StdEncoding.AppendDecode(g.mulaw[:0], payload); err != nil {
		g.mulaw = g.mulaw[:0]
	}
	g.pcm = g711.AppendPCM16LE(g.pcm[:0], g.mulaw)
	out = append(out, `{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=8000","data":"`...)
	out = base64.StdEncoding.AppendEncode(out, g.pcm)
	return append(out, `"}}}`...)
}

// geminiToCarrier reads the model's messages, moving to the next
// connection when a goAway's switch-over retires the one it reads.
func (c *Call) geminiToCarrier(ctx context.Context) error {
	g := c.gem
	defer g.flushTranscripts()
	for {
		lc := g.cur.Load()
		err := relayFrom(ctx, lc.sock, EndModelDisconnect, c.fromGemini)
		if ctx.Err() != nil || g.cur.Load() == lc {
			return err
		}
	}
}

// fromGemini handles one server message; an error ends the call.
func (c *Call) fromGemini(ctx context.Context, msg []byte) error {
	g := c.gem
	var err error
	eachField(msg, func(key, val []byte) bool {
		switch string(key) {
		case "serverContent":
			err = g.serverContent(ctx, val)
		case "toolCall":
			err = g.toolCall(ctx, val)
		case "toolCallCancellation":
			g.toolCallCancellation(val)
		case "setupComplete":
			err = c.sessionReady(ctx)
		case "sessionResumptionUpdate":
			g.resumptionUpdate(val)
		case "goAway":
			g.goAway(ctx, stringField(val, "timeLeft"))
		}
		return err == nil
	})
	return err
}

// serverContent handles the model's output: audio, transcripts, the
// caller's barge-in and the turn's end, in that order.
func (g *geminiSide) serverContent(ctx context.Context, sc []byte) error {
	if turn, _, ok := field(sc, "modelTurn"); ok {
		parts, _, _ := field(turn, "parts")
		var err error
		eachElem(parts, func(part []byte) bool {
			if inline, _, ok := field(part, "inlineData"); ok {
				if data := stringField(inline, "data"); len(data) > 0 {
					err = g.audio(ctx, data)
				}
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	if t, _, ok := field(sc, "inputTranscription"); ok {
		g.inText.WriteString(transcriptText(t))
	}
	if t, _, ok := field(sc, "outputTranscription"); ok {
		g.flushCaller()
		g.outText.WriteString(transcriptText(t))
	}
	if v, _, _ := field(sc, "interrupted"); string(v) == "true" {
		if err := g.interrupted(ctx); err != nil {
			return err
		}
	}
	if v, _, _ := field(sc, "turnComplete"); string(v) == "true" {
		return g.turnComplete(ctx)
	}
	return nil
}

// audio turns one chunk of 24 kHz PCM into carrier frames. A turn's first
// audio starts a response (as response.created does).
func (g *geminiSide) audio(ctx context.Context, data []byte) error {
	c := g.c
	c.mu.Lock()
	active := c.responseActive
	c.mu.Unlock()
	if !active {
		c.responseStarted()
		c.turnStart(ctx)
		g.flushCaller()
		g.answerStarts()
	}
	var err error
	if g.in, err = base64.StdEncoding.AppendDecode(g.in[:0], data); err != nil {
		c.log.Warn("model audio that is not base64", "err", err)
		return nil
	}
	g.pend = g.down.AppendMuLaw(g.pend, g.in)
	sent := 0
	for ; len(g.pend)-sent >= geminiFrame; sent += geminiFrame {
		if err := g.sendOut(ctx, g.pend[sent:sent+geminiFrame]); err != nil {
			return err
		}
	}
	g.pend = g.pend[:copy(g.pend, g.pend[sent:])]
	return nil
}

// sendOut sends mu-law to the carrier as the OpenAI side sends a delta.
func (g *geminiSide) sendOut(ctx context.Context, mulaw []byte) error {
	g.frameB64 = base64.StdEncoding.AppendEncode(g.frameB64[:0], mulaw)
	return g.c.audioOut(ctx, g.turnID, g.frameB64)
}

// nextTurn starts a new turn: its audio is a new item for the playback
// state, and the resampler starts from silence.
func (g *geminiSide) nextTurn() {
	g.pend = g.pend[:0]
	g.down.Reset()
	g.turn++
	g.turnID = strconv.AppendInt(append(g.turnID[:0], "turn"...), g.turn, 10)
}

// interrupted is the caller talking over the model: the carrier drops
// what it has not played, as on OpenAI's speech_started. The service
// knows how far it got, so nothing is truncated.
func (g *geminiSide) interrupted(ctx context.Context) error {
	g.flushAgent()
	g.nextTurn()
	g.c.turnEnd()
	g.c.mu.Lock()
	g.c.responseActive = false
	g.c.mu.Unlock()
	_, _, _, err := g.c.clearPlayback(ctx)
	return err
}

// turnComplete ends the model's turn: the last partial frame goes out, a
// mark follows it, and the turn's transcripts are recorded.
func (g *geminiSide) turnComplete(ctx context.Context) error {
	c := g.c
	if len(g.pend) > 0 {
		if err := g.sendOut(ctx, g.pend); err != nil {
			return err
		}
	}
	g.nextTurn()
	c.turnEnd()
	g.flushTranscripts()
	if err := c.markRest(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.responseActive = false
	c.mu.Unlock()
	if c.shouldEndNow() {
		return end(EndAgentHangup, nil)
	}
	return nil
}

// transcriptText is the text of a transcription object.
func transcriptText(t []byte) string {
	var v struct {
		Text string `json:"text"`
	}
	json.Unmarshal(t, &v)
	return v.Text
}

func (g *geminiSide) flushCaller() { g.emit(&g.inText, "caller") }
func (g *geminiSide) flushAgent()  { g.emit(&g.outText, "agent") }

func (g *geminiSide) flushTranscripts() {
	g.flushCaller()
	g.flushAgent()
}

// emit records what a side said since its last line, as one line: the
// service sends transcripts in pieces.
func (g *geminiSide) emit(b *strings.Builder, role string) {
	text := strings.TrimSpace(b.String())
	b.Reset()
	if text != "" {
		g.c.opts.OnEvent(Event{Type: "transcript", Role: role, Text: text, At: time.Now()})
	}
}
