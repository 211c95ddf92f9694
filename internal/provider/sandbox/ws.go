package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/g711"
)

// Voice activity: caller audio louder than vadThreshold (mean absolute
// 16-bit sample) starts speech; vadSilence of quieter audio ends it.
const (
	vadThreshold = 800
	vadSilence   = 500 * time.Millisecond
)

// deltaSamples is how much audio one response.output_audio.delta carries:
// 100 ms of 8 kHz mu-law.
const deltaSamples = 800

// realtime answers GET /v1/realtime?model=...: the realtime WebSocket of
// OpenAI's GA API, as the phone relay uses it. The client sends
// session.update (audio/pcmu both ways) before audio; the sandbox then plays
// the same script as on WebRTC, with its voice as base64 mu-law deltas,
// transcripts, speech_started/stopped from the caller audio's loudness, and
// one function call.
func (s *Server) realtime(w http.ResponseWriter, r *http.Request) error {
	if r.Header.Get("Authorization") != "Bearer "+APIKey {
		return agentline.Errorf(agentline.EUnauthorized, "the sandbox takes the API key %s", APIKey)
	}
	model := r.URL.Query().Get("model")
	if model == "" {
		return agentline.Invalid("model", "the realtime WebSocket needs ?model=, such as gpt-realtime")
	}
	if !isWebSocket(r) {
		return agentline.Invalid("", "the realtime API is a WebSocket: open it with an upgrade request")
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return agentline.Errorf(agentline.EUnavailable, "the sandbox is shutting down")
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return nil // Accept has answered
	}
	if r.Header.Get("OpenAI-Beta") != "" {
		// As the GA service does.
		conn.Close(4000, "beta_api_shape_disabled")
		return nil
	}
	conn.SetReadLimit(1 << 20)
	id, _ := randomID("wss_")
	ctx, cancel := context.WithCancel(context.Background())
	c := &call{id: id, srv: s, session: sessionConfig{Model: model}, ctx: ctx, cancel: cancel,
		in: make(chan map[string]any, 64), log: s.logger.With("call_id", id),
		out:    func(b []byte) error { return conn.Write(ctx, websocket.MessageText, b) },
		hangUp: func() { conn.CloseNow() },
	}
	samples := 0 // voice samples generated, for the waveform's phase
	c.speak = func(respID, itemID string, d time.Duration) {
		// A real model sends its audio faster than it plays; so does this.
		buf := make([]byte, deltaSamples)
		for left := int(d.Seconds() * 8000); left > 0 && c.ctx.Err() == nil; left -= len(buf) {
			buf = buf[:min(left, deltaSamples)]
			fillVoice(buf, samples)
			samples += len(buf)
			c.send(map[string]any{"type": "response.output_audio.delta", "response_id": respID, "item_id": itemID,
				"output_index": 0, "content_index": 0, "delta": base64.StdEncoding.EncodeToString(buf)})
		}
		c.send(map[string]any{"type": "response.output_audio.done", "response_id": respID, "item_id": itemID, "output_index": 0, "content_index": 0})
	}
	s.mu.Lock()
	s.calls[c] = struct{}{}
	s.mu.Unlock()
	s.callCount.Add(1)
	defer c.close()
	c.sessionCreated()
	c.readSocket(conn)
	return nil
}

// readSocket handles the client's events until the socket closes.
func (c *call) readSocket(conn *websocket.Conn) {
	var (
		started  bool
		vad      vad
		audio    []byte
		received int // ms of caller audio
	)
	for {
		_, msg, err := conn.Read(c.ctx)
		if err != nil {
			return
		}
		var ev map[string]any
		if json.Unmarshal(msg, &ev) != nil {
			c.sendError("invalid_json", "We could not parse the JSON body of your request.")
			continue
		}
		switch ev["type"] {
		case "session.update":
			var u struct {
				Session sessionUpdate `json:"session"`
			}
			json.Unmarshal(msg, &u)
			if !started && slices.Equal(u.Session.OutputModalities, []string{"text"}) {
				// A text session (an agent's test run): no audio, and the
				// function call comes in answer to the first message.
				c.text, c.toolFirst = true, true
			}
			if in, out := u.Session.Audio.Input.Format.Type, u.Session.Audio.Output.Format.Type; !c.text && (in != "audio/pcmu" || out != "audio/pcmu") {
				c.sendError("unsupported_audio_format", "the sandbox speaks audio/pcmu only, in and out (got "+in+" in, "+out+" out)")
				continue
			}
			c.send(map[string]any{"type": "session.updated", "session": ev["session"]})
			if !started {
				started = true
				c.session.Tools = u.Session.Tools
				go c.run()
			}
		case "input_audio_buffer.append":
			if !started {
				c.sendError("audio_before_session_update", "input audio arrived before a session.update set audio/pcmu")
				continue
			}
			b64, _ := ev["audio"].(string)
			audio, err = base64.StdEncoding.AppendDecode(audio[:0], []byte(b64))
			if err != nil {
				c.sendError("invalid_audio", "audio must be base64")
				continue
			}
			c.heard.Add(1)
			received += len(audio) / 8
			switch vad.feed(audio) {
			case speechStarted:
				vad.item = c.next("item")
				c.send(map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": received, "item_id": vad.item})
			case speechStopped:
				c.send(map[string]any{"type": "input_audio_buffer.speech_stopped", "audio_end_ms": received, "item_id": vad.item})
				c.turnOver.Store(true)
			}
		case "conversation.item.truncate":
			c.send(map[string]any{"type": "conversation.item.truncated", "item_id": ev["item_id"], "content_index": ev["content_index"], "audio_end_ms": ev["audio_end_ms"]})
		case "conversation.item.create", "response.create":
			if ev["type"] == "response.create" && c.takeGreeting(ev) {
				continue
			}
			select {
			case c.in <- ev:
			default: // a flood of events; the script needs few
			}
		}
	}
}

// sessionUpdate is the part of a session.update the sandbox reads.
type sessionUpdate struct {
	OutputModalities []string `json:"output_modalities"`
	Audio            struct {
		Input  audioFormat `json:"input"`
		Output audioFormat `json:"output"`
	} `json:"audio"`
	Tools []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

type audioFormat struct {
	Format struct {
		Type string `json:"type"`
	} `json:"format"`
}

func (c *call) sendError(code, message string) {
	c.send(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "code": code, "message": message}})
}

// vad is the sandbox's voice activity detection: loudness alone.
type vad struct {
	speaking bool
	quiet    time.Duration
	item     string
}

type vadEvent int

const (
	noChange vadEvent = iota
	speechStarted
	speechStopped
)

// feed takes one chunk of mu-law audio.
func (v *vad) feed(mulaw []byte) vadEvent {
	if len(mulaw) == 0 {
		return noChange
	}
	var sum int
	for _, b := range mulaw {
		s := int(g711.Decode(b))
		if s < 0 {
			s = -s
		}
		sum += s
	}
	loud := sum/len(mulaw) > vadThreshold
	switch {
	case loud && !v.speaking:
		v.speaking, v.quiet = true, 0
		return speechStarted
	case loud:
		v.quiet = 0
	case v.speaking:
		v.quiet += time.Duration(len(mulaw)) * time.Second / 8000
		if v.quiet >= vadSilence {
			v.speaking = false
			return speechStopped
		}
	}
	return noChange
}

// isWebSocket reports whether r asks for a WebSocket upgrade.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}
