// Package realtimefake is an in-process OpenAI-compatible realtime WebSocket
// server for tests and load runs: it checks what a client sends the way the
// real service does (bearer key, no OpenAI-Beta header, session.update
// before audio), records every client event, and lets a test push server
// events to a session.
package realtimefake

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/provider/fakeserver"
)

// Server is a fake realtime service.
type Server struct {
	// APIKey is the bearer key the server accepts.
	APIKey string
	// Echo, when true, answers every input_audio_buffer.append with a
	// response.output_audio.delta carrying the same audio, and sends back
	// any message that has no "type" as it came (what a pass-through relay
	// forwards), for load runs. Nothing is recorded then.
	Echo bool
	// EchoTurn, with Echo, makes every EchoTurn appends one model turn:
	// a response.created before the first one's echo, a response.done
	// after the last one's (what the relay traces as a turn).
	EchoTurn int
	// ReadyDelay holds each session.updated back this long, as a slow
	// service would; NeverReady never sends it (the socket stays open).
	ReadyDelay time.Duration
	NeverReady bool

	srv *fakeserver.Server[*Session]
	mux *http.ServeMux
}

// New starts a fake on a loopback port; Close stops it.
func New(apiKey string) *Server {
	s := &Server{APIKey: apiKey, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /v1/realtime", s.accept)
	s.srv = fakeserver.Start[*Session](s.mux)
	return s
}

// Handler serves the realtime socket, for a test that serves it beside
// other endpoints under one base URL.
func (s *Server) Handler() http.Handler { return s.mux }

// URL is the base URL to use as OPENAI_BASE_URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL() }

// Close closes every session and stops the server.
func (s *Server) Close() { s.srv.Close() }

// Next waits for the next session to connect.
func (s *Server) Next(ctx context.Context) (*Session, error) { return s.srv.Next(ctx) }

// Count returns how many sessions connected so far.
func (s *Server) Count() int { return s.srv.Count() }

func (s *Server) accept(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+s.APIKey {
		http.Error(w, `{"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key provided."}}`, http.StatusUnauthorized)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	conn.SetReadLimit(1 << 22)
	if r.Header.Get("OpenAI-Beta") != "" {
		// The GA service closes such sockets at once.
		conn.Close(4000, "beta_api_shape_disabled")
		return
	}
	ss := &Session{Model: r.URL.Query().Get("model"), conn: conn, server: s}
	ss.client = fakeserver.NewClient(conn, &ss.mu)
	s.srv.Add(ss)
	ss.run(r.Context())
}

// Event is one client event as received.
type Event struct {
	Type string
	Raw  []byte
}

// Session is one connected client.
type Session struct {
	Model  string
	conn   *websocket.Conn
	server *Server

	mu      sync.Mutex
	client  *fakeserver.Client // told of every received event
	events  []Event
	audio   []string // the audio of each input_audio_buffer.append, in order
	updated bool
}

func (ss *Session) run(ctx context.Context) {
	defer ss.client.End()
	ss.Send(ctx, map[string]any{"type": "session.created", "session": map[string]any{"type": "realtime", "model": ss.Model}})
	var buf bytes.Buffer
	appends := 0
	for {
		if ss.client.Read(ctx, &buf) != nil {
			return
		}
		var head struct {
			Type  string `json:"type"`
			Audio string `json:"audio"`
		}
		if ss.server.Echo && !bytes.HasPrefix(buf.Bytes(), []byte(`{"type"`)) {
			ss.SendRaw(ctx, buf.Bytes())
			continue
		}
		if err := json.Unmarshal(buf.Bytes(), &head); err != nil {
			ss.sendError(ctx, "invalid_json", "We could not parse the JSON body of your request.")
			continue
		}
		ss.mu.Lock()
		if !ss.server.Echo {
			ss.events = append(ss.events, Event{Type: head.Type, Raw: bytes.Clone(buf.Bytes())})
		}
		updatedBefore := ss.updated
		if head.Type == "session.update" {
			ss.updated = true
		}
		if head.Type == "input_audio_buffer.append" {
			if !ss.server.Echo {
				ss.audio = append(ss.audio, head.Audio)
			}
		}
		ss.client.ChangedLocked()
		ss.mu.Unlock()
		switch head.Type {
		case "session.update":
			var u struct {
				Session json.RawMessage `json:"session"`
			}
			json.Unmarshal(buf.Bytes(), &u)
			updated := map[string]any{"type": "session.updated", "session": u.Session}
			switch {
			case ss.server.NeverReady:
			case ss.server.ReadyDelay > 0:
				time.AfterFunc(ss.server.ReadyDelay, func() { ss.Send(ctx, updated) })
			default:
				ss.Send(ctx, updated)
			}
		case "input_audio_buffer.append":
			if !updatedBefore {
				// Audio before the pcmu session.update would be taken as 24 kHz PCM.
				ss.sendError(ctx, "audio_before_session_update", "input audio arrived before session.update")
			}
			if ss.server.Echo {
				appends++
				ss.echo(ctx, head.Audio, appends)
			}
		}
	}
}

func appendDelta(out []byte, audio, itemID string) []byte {
	out = append(out, `{"type":"response.output_audio.delta","response_id":"resp_1","item_id":"`...)
	out = append(out, itemID...)
	out = append(out, `","output_index":0,"content_index":0,"delta":"`...)
	out = append(out, audio...)
	return append(out, `"}`...)
}

func (ss *Session) sendError(ctx context.Context, code, message string) {
	ss.Send(ctx, map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "code": code, "message": message}})
}

// Send writes one server event (marshaled to JSON) to the client.
func (ss *Session) Send(ctx context.Context, event any) error {
	b, err := json.Marshal(event)
	if err != nil {
		return err
	}
	return ss.SendRaw(ctx, b)
}

// SendRaw writes one server event as given.
func (ss *Session) SendRaw(ctx context.Context, event []byte) error {
	return ss.conn.Write(ctx, websocket.MessageText, event)
}

// Events returns the client events received so far.
func (ss *Session) Events() []Event {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]Event(nil), ss.events...)
}

// Audio returns the audio strings of every input_audio_buffer.append, in order.
func (ss *Session) Audio() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]string(nil), ss.audio...)
}

// WaitFor waits until a client event satisfies match and returns it.
func (ss *Session) WaitFor(ctx context.Context, match func(Event) bool) (Event, error) {
	return fakeserver.Find(ctx, ss.client, &ss.events, match)
}

// WaitType waits for the first client event of the given type.
func (ss *Session) WaitType(ctx context.Context, typ string) (Event, error) {
	return ss.WaitFor(ctx, func(e Event) bool { return e.Type == typ })
}

// WaitAudio waits until n audio appends have arrived.
func (ss *Session) WaitAudio(ctx context.Context, n int) ([]string, error) {
	var a []string
	err := ss.client.Until(ctx, func() bool {
		if len(ss.audio) < n {
			return false
		}
		a = append([]string(nil), ss.audio...)
		return true
	})
	return a, err
}

// Close closes the session from the server side, as a failing service would.
func (ss *Session) Close(code websocket.StatusCode, reason string) { ss.client.Close(code, reason) }

// Drop cuts the connection without a close handshake.
func (ss *Session) Drop() { ss.client.Drop() }

// CloseStatus is the close code the client's close frame carried, once the
// session is done: -1 when the socket ended without one (1006).
func (ss *Session) CloseStatus() websocket.StatusCode { return ss.client.CloseStatus() }

// WaitDone waits for the client to go, up to d.
func (ss *Session) WaitDone(d time.Duration) bool { return ss.client.WaitDone(d) }

// WSURL turns the fake's base URL into the realtime WebSocket URL for model.
func WSURL(base, model string) string {
	return strings.Replace(base, "http", "ws", 1) + "/v1/realtime?model=" + model
}

// Answer plays one turn as the service does with server VAD: it reports
// the caller's speech stopped at audioEndMs of the input buffer, waits
// delay (the model's think time, which a test measures the relay's turn
// latency against), then sends the answer's first audio delta as itemID.
func (ss *Session) Answer(ctx context.Context, audioEndMs int64, delay time.Duration, itemID, audioB64 string) error {
	if err := ss.Send(ctx, map[string]any{"type": "input_audio_buffer.speech_stopped", "audio_end_ms": audioEndMs, "item_id": itemID + "_in"}); err != nil {
		return err
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return ss.SendRaw(ctx, appendDelta(nil, audioB64, itemID))
}

var (
	echoCreated = []byte(`{"type":"response.created","response":{"id":"resp_1"}}`)
	echoDone    = []byte(`{"type":"response.done","response":{"id":"resp_1"}}`)
)

// echo answers the n-th append with its audio, inside turns of EchoTurn
// appends when that is set.
func (ss *Session) echo(ctx context.Context, audio string, n int) {
	turn := ss.server.EchoTurn
	if turn > 0 && n%turn == 1%turn {
		ss.SendRaw(ctx, echoCreated)
	}
	ss.SendRaw(ctx, appendDelta(nil, audio, "item_echo"))
	if turn > 0 && n%turn == 0 {
		ss.SendRaw(ctx, echoDone)
	}
}
