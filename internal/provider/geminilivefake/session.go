package geminilivefake

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/provider/fakeserver"
)

// Message is one client message as received; Kind is its one top-level
// field: setup, realtimeInput, clientContent or toolResponse.
type Message struct {
	Kind string
	Raw  []byte
}

// Chunk is one realtimeInput.audio blob, decoded.
type Chunk struct {
	MimeType string
	PCM      []byte
}

// Session is one connected client.
type Session struct {
	Path  string // as the client asked for it
	Token string // the access token of a constrained session
	conn  *websocket.Conn

	server *Server

	mu          sync.Mutex
	client      *fakeserver.Client // told of every recorded message
	setup       *Setup
	setupRaw    []byte
	resumed     string // the handle the setup resumed
	messages    []Message
	chunks      []Chunk
	audioBytes  int64
	mediaChunks int      // realtimeInput.mediaChunks (deprecated) seen
	texts       []string // realtimeInput.text
	sent        [][]byte // server messages, unless Echo

	// Echo's buffers, on the session's reader alone.
	echoIn, echoPCM, echoOut []byte
}

// clientMessage is what the fake reads of a client message.
type clientMessage struct {
	Setup         json.RawMessage `json:"setup"`
	RealtimeInput *struct {
		Audio *struct {
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		} `json:"audio"`
		MediaChunks []json.RawMessage `json:"mediaChunks"`
		Text        string            `json:"text"`
	} `json:"realtimeInput"`
	ClientContent json.RawMessage `json:"clientContent"`
	ToolResponse  json.RawMessage `json:"toolResponse"`
}

func (m clientMessage) kind() string {
	switch {
	case m.Setup != nil:
		return "setup"
	case m.RealtimeInput != nil:
		return "realtimeInput"
	case m.ClientContent != nil:
		return "clientContent"
	case m.ToolResponse != nil:
		return "toolResponse"
	}
	return "unknown"
}

func (ss *Session) run(ctx context.Context) {
	defer ss.client.End()
	var buf bytes.Buffer
	for {
		if ss.client.Read(ctx, &buf) != nil {
			return
		}
		if ss.server.Echo && ss.echo(ctx, buf.Bytes()) {
			continue
		}
		var m clientMessage
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			ss.conn.Close(websocket.StatusInvalidFramePayloadData, "Invalid JSON payload received.")
			continue
		}
		if !ss.take(ctx, m, buf.Bytes()) {
			return
		}
	}
}

// take handles one client message; false ends the session.
func (ss *Session) take(ctx context.Context, m clientMessage, raw []byte) bool {
	kind := m.kind()
	ss.mu.Lock()
	first := ss.setup == nil
	ss.mu.Unlock()
	if first {
		return ss.takeSetup(ctx, m, raw)
	}
	if ss.server.Echo {
		return true
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	defer ss.changedLocked()
	ss.messages = append(ss.messages, Message{Kind: kind, Raw: bytes.Clone(raw)})
	if in := m.RealtimeInput; in != nil {
		ss.mediaChunks += len(in.MediaChunks)
		if in.Text != "" {
			ss.texts = append(ss.texts, in.Text)
		}
		if in.Audio != nil {
			pcm, _ := base64.StdEncoding.DecodeString(in.Audio.Data)
			ss.chunks = append(ss.chunks, Chunk{MimeType: in.Audio.MimeType, PCM: pcm})
			ss.audioBytes += int64(len(pcm))
		}
	}
	return true
}

// takeSetup checks the first message as the service does and answers it.
func (ss *Session) takeSetup(ctx context.Context, m clientMessage, raw []byte) bool {
	if lock := ss.server.Constraints; lock != nil && ss.Token != "" && m.Setup != nil {
		m.Setup = locked(m.Setup, lock(ss.Token))
	}
	var s Setup
	if m.Setup == nil || json.Unmarshal(m.Setup, &s) != nil || !strings.HasPrefix(s.Model, "models/") {
		ss.conn.Close(websocket.StatusInvalidFramePayloadData, "Invalid JSON payload: the first message must be a setup with models/{model}")
		return false
	}
	// Native-audio models speak only: the service refuses a setup that
	// asks one for TEXT answers.
	if ss.server.speaksOnly(strings.TrimPrefix(s.Model, "models/")) && slices.Contains(s.GenerationConfig.ResponseModalities, "TEXT") {
		ss.conn.Close(websocket.StatusInvalidFramePayloadData, "Cannot extract voices from a non-audio request.")
		return false
	}
	if r := s.SessionResumption; r != nil && r.Handle != "" && !ss.server.knownHandle(r.Handle) {
		ss.conn.Close(websocket.StatusInvalidFramePayloadData, "Request contains an invalid argument: session resumption handle")
		return false
	}
	ss.mu.Lock()
	ss.setup, ss.setupRaw = &s, bytes.Clone(raw)
	if s.SessionResumption != nil {
		ss.resumed = s.SessionResumption.Handle
	}
	ss.messages = append(ss.messages, Message{Kind: "setup", Raw: ss.setupRaw})
	ss.changedLocked()
	ss.mu.Unlock()
	if ss.server.NeverReady {
		return true
	}
	ss.Send(ctx, map[string]any{"setupComplete": map[string]any{}})
	if s.SessionResumption != nil {
		ss.IssueHandle(ctx)
	}
	if f := ss.server.OnSession; f != nil {
		go f(ctx, ss)
	}
	return true
}

func (ss *Session) changedLocked() { ss.client.ChangedLocked() }

// echo answers a realtimeInput audio message of an Echo server with the
// same audio at 24 kHz (each sample three times), without decoding the
// JSON, so that a load run's fake keeps up; false for any other message.
func (ss *Session) echo(ctx context.Context, msg []byte) bool {
	const key = `"data":"`
	i := bytes.Index(msg, []byte(key))
	if ss.setup == nil || i < 0 || !bytes.HasPrefix(msg, []byte(`{"realtimeInput":`)) {
		return false
	}
	data := msg[i+len(key):]
	data = data[:max(bytes.IndexByte(data, '"'), 0)]
	pcm, err := base64.StdEncoding.AppendDecode(ss.echoIn[:0], data)
	if err != nil {
		return true
	}
	ss.echoIn, ss.echoPCM = pcm, ss.echoPCM[:0]
	for j := 0; j+1 < len(pcm); j += 2 {
		ss.echoPCM = append(ss.echoPCM, pcm[j], pcm[j+1], pcm[j], pcm[j+1], pcm[j], pcm[j+1])
	}
	out := append(ss.echoOut[:0], `{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"`+OutputMIME+`","data":"`...)
	out = base64.StdEncoding.AppendEncode(out, ss.echoPCM)
	ss.echoOut = append(out, `"}}]}}}`...)
	ss.conn.Write(ctx, websocket.MessageBinary, ss.echoOut)
	return true
}

// Setup returns the session's setup, once it came, and its raw message.
func (ss *Session) Setup() (Setup, []byte) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.setup == nil {
		return Setup{}, nil
	}
	return *ss.setup, ss.setupRaw
}

// Resumed is the resumption handle the session's setup carried ("" for a
// new session).
func (ss *Session) Resumed() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.resumed
}

// Messages returns the client messages received so far.
func (ss *Session) Messages() []Message {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]Message(nil), ss.messages...)
}

// Chunks returns every realtimeInput.audio blob so far.
func (ss *Session) Chunks() []Chunk {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]Chunk(nil), ss.chunks...)
}

// AudioBytes is how many PCM bytes realtimeInput.audio carried so far.
func (ss *Session) AudioBytes() int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.audioBytes
}

// MediaChunks counts the deprecated realtimeInput.mediaChunks blobs seen.
func (ss *Session) MediaChunks() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.mediaChunks
}

// Sent returns the server messages sent so far (none in Echo mode).
func (ss *Session) Sent() [][]byte {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([][]byte(nil), ss.sent...)
}

// Texts returns every realtimeInput.text so far.
func (ss *Session) Texts() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]string(nil), ss.texts...)
}

// WaitFor waits until a client message satisfies match and returns it.
func (ss *Session) WaitFor(ctx context.Context, match func(Message) bool) (Message, error) {
	return fakeserver.Find(ctx, ss.client, &ss.messages, match)
}

// WaitKind waits for the first client message of a kind.
func (ss *Session) WaitKind(ctx context.Context, kind string) (Message, error) {
	return ss.WaitFor(ctx, func(m Message) bool { return m.Kind == kind })
}

// WaitAudioBytes waits until realtimeInput.audio has carried n PCM bytes.
func (ss *Session) WaitAudioBytes(ctx context.Context, n int64) error {
	return ss.client.Until(ctx, func() bool { return ss.audioBytes >= n })
}

// Close closes the session from the server side, as the service does when
// it ends a connection.
func (ss *Session) Close(code websocket.StatusCode, reason string) { ss.client.Close(code, reason) }

// Drop cuts the connection without a close handshake.
func (ss *Session) Drop() { ss.client.Drop() }

// Done is closed once the client has gone.
func (ss *Session) Done() <-chan struct{} { return ss.client.Done() }

// CloseStatus is the close code the client's close frame carried, once the
// session is done: -1 when the socket ended without one.
func (ss *Session) CloseStatus() websocket.StatusCode { return ss.client.CloseStatus() }

// WaitDone waits for the client to go, up to d.
func (ss *Session) WaitDone(d time.Duration) bool { return ss.client.WaitDone(d) }
