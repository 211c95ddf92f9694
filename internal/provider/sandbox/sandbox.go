// Package sandbox is a pretend OpenAI-compatible realtime provider inside
// agentline, so that a newcomer can talk to the widget, or make a phone
// call, with no API key (`agentline serve --sandbox`), and the browser tests
// have a real WebRTC peer. It answers POST /v1/realtime/client_secrets (ek_
// secrets it remembers) and POST /v1/realtime/calls (SDP offer in, SDP
// answer out) with a pion WebRTC peer that sends a generated voice-like
// sound as PCMU (G.711, which every browser offers and needs no encoder
// library), counts the RTP packets the browser sends, and on the
// "oai-events" data channel plays a short scripted conversation: a
// greeting, what it "heard", one function call of the agent's first tool,
// and an answer that quotes the tool's output. GET /v1/realtime is the same
// script on the realtime WebSocket the phone relay uses, with the voice as
// base64 mu-law audio deltas. A client secret minted for a text session
// (output_modalities ["text"]) opens a call with no voice track: the
// sandbox waits for the visitor's message and answers it at once with
// output_text events, then makes the function call. It understands nothing
// it hears; it is not for production.
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/logging"
	"github.com/pion/webrtc/v4"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/httpx"
)

// APIKey is the provider key agentline uses for the sandbox. The settings
// point OpenAI-kind agents at the sandbox with it (config.ApplySandbox),
// so config defines it and this is the same constant.
const APIKey = config.SandboxAPIKey

// secretTTL is how long an ek_ secret may open calls, as at OpenAI's
// default for widget sessions.
const secretTTL = 10 * time.Minute

// Server is the sandbox provider.
type Server struct {
	logger *slog.Logger
	now    func() time.Time
	// pause is the unit of the scripted conversation's waits; tests keep it.
	pause time.Duration

	mu      sync.Mutex
	secrets map[string]secret
	calls   map[*call]struct{}
	closed  bool

	// instructions are those of every secret minted, in order.
	instructions []string
	// messages are the text of every user message item received, in order.
	messages []string

	rtpPackets  atomic.Int64
	callCount   atomic.Int64
	toolOutputs chan string
}

type secret struct {
	expires time.Time
	session sessionConfig
}

// sessionConfig is the part of the client_secrets session the sandbox
// uses.
type sessionConfig struct {
	Model            string   `json:"model"`
	Instructions     string   `json:"instructions"`
	OutputModalities []string `json:"output_modalities,omitempty"`
	Tools            []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

// text reports whether the session answers in text only: a client secret
// minted with output_modalities ["text"].
func (s sessionConfig) text() bool {
	return len(s.OutputModalities) == 1 && s.OutputModalities[0] == "text"
}

// New returns a sandbox provider; logger may be nil.
func New(logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Server{
		logger: logger, now: time.Now, pause: 400 * time.Millisecond,
		secrets: map[string]secret{}, calls: map[*call]struct{}{},
		toolOutputs: make(chan string, 16),
	}
}

// Routes serves the provider under prefix (e.g. /sandbox/openai, which then
// is OPENAI_BASE_URL's path).
func (s *Server) Routes(prefix string) []httpx.Route {
	r := func(method, path string, fn httpx.HandlerFunc) httpx.Route {
		return httpx.Route{Method: method, Pattern: prefix + path, Auth: httpx.ProviderKey, Name: httpx.NameOf(fn), Handler: fn}
	}
	return []httpx.Route{
		r("GET", "/v1/models", models),
		r("GET", "/v1/realtime", s.realtime),
		r("POST", "/v1/realtime/client_secrets", s.clientSecret),
		r("POST", "/v1/realtime/calls", s.newCall),
		{Method: "OPTIONS", Pattern: prefix + "/v1/realtime/calls", Auth: httpx.Preflight, Name: httpx.NameOf(preflight), Handler: http.HandlerFunc(preflight)},
	}
}

// Handler serves Routes("") alone, for tests and in-process clients.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range s.Routes("") {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	return mux
}

// RTPPackets is how many RTP packets browsers have sent to the sandbox.
func (s *Server) RTPPackets() int64 { return s.rtpPackets.Load() }

// Instructions are the session instructions of every client secret minted,
// in order: what the agent was told, as the provider saw it.
func (s *Server) Instructions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.instructions...)
}

// Calls is how many calls were opened.
func (s *Server) Calls() int64 { return s.callCount.Load() }

// ToolOutputs delivers each function_call_output a browser sends back.
func (s *Server) ToolOutputs() <-chan string { return s.toolOutputs }

// Close hangs up every call.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	calls := make([]*call, 0, len(s.calls))
	for c := range s.calls {
		calls = append(calls, c)
	}
	s.mu.Unlock()
	for _, c := range calls {
		c.close()
	}
	return nil
}

func (s *Server) clientSecret(w http.ResponseWriter, r *http.Request) error {
	if r.Header.Get("Authorization") != "Bearer "+APIKey {
		return agentline.Errorf(agentline.EUnauthorized, "the sandbox takes the API key %s", APIKey)
	}
	var body struct {
		Session sessionConfig `json:"session"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return agentline.Invalid("", "body must be a client_secrets request: %v", err)
	}
	value, err := randomID("ek_sandbox_")
	if err != nil {
		return err
	}
	exp := s.now().Add(secretTTL)
	s.mu.Lock()
	for k, v := range s.secrets {
		if s.now().After(v.expires) {
			delete(s.secrets, k)
		}
	}
	s.secrets[value] = secret{expires: exp, session: body.Session}
	s.instructions = append(s.instructions, body.Session.Instructions)
	s.mu.Unlock()
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"value": value, "expires_at": exp.Unix(), "session": body.Session})
	return nil
}

// preflight lets browsers POST an SDP offer with a bearer token from any
// page, as the real provider does; OpenAI's Agents SDK adds its
// X-OpenAI-Agents-SDK header.
func preflight(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Methods", "POST")
	w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-OpenAI-Agents-SDK")
	w.Header().Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// newCall answers an SDP offer with the sandbox's answer, and the call's
// id in Location, which a page may read (OpenAI's Agents SDK does).
func (s *Server) newCall(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Expose-Headers", "Location")
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	sec, ok := s.secrets[token]
	closed := s.closed
	s.mu.Unlock()
	if !ok || s.now().After(sec.expires) {
		return agentline.Errorf(agentline.EUnauthorized, "unknown or expired client secret")
	}
	if closed {
		return agentline.Errorf(agentline.EUnavailable, "the sandbox is shutting down")
	}
	offer, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return agentline.Invalid("", "read the SDP offer: %v", err)
	}
	if !strings.HasPrefix(string(offer), "v=0") {
		return agentline.Invalid("", "the body must be an SDP offer (application/sdp)")
	}
	c, answer, err := s.answer(string(offer), sec.session)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.calls[c] = struct{}{}
	s.mu.Unlock()
	s.callCount.Add(1)
	w.Header().Set("Content-Type", "application/sdp")
	w.Header().Set("Location", "/v1/realtime/calls/"+c.id)
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, answer)
	return nil
}

func randomID(prefix string) (string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("sandbox: random: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// answer builds the peer for an offer: PCMU only, the offer's audio m-line
// answered with the sandbox's own track, and the data channel script.
func (s *Server) answer(offer string, session sessionConfig) (*call, string, error) {
	pc, err := newPeer()
	if err != nil {
		return nil, "", err
	}
	id, _ := randomID("rtc_")
	ctx, cancel := context.WithCancel(context.Background())
	var dc atomic.Pointer[webrtc.DataChannel]
	c := &call{id: id, srv: s, session: session, ctx: ctx, cancel: cancel, in: make(chan map[string]any, 64),
		log: s.logger.With("call_id", id), webrtc: true, text: session.text(), hangUp: func() { pc.Close() },
		out: func(b []byte) error {
			if d := dc.Load(); d != nil {
				return d.SendText(string(b))
			}
			return nil
		}}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		c.close()
		return nil, "", agentline.Invalid("", "the SDP offer was refused: %v", err)
	}
	v, err := c.attach(pc, &dc)
	if err != nil {
		c.close()
		return nil, "", err
	}
	sdp, err := localAnswer(pc)
	if err != nil {
		c.close()
		return nil, "", err
	}
	if v != nil {
		go v.run(ctx)
	}
	return c, sdp, nil
}

// newPeer makes a peer connection that speaks PCMU only, as the realtime
// service does.
func newPeer() (*webrtc.PeerConnection, error) {
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: pcmu, PayloadType: 0}, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("sandbox: codec: %w", err)
	}
	// pion's own log lines (e.g. a closed pipe at hang-up) are noise here.
	var se webrtc.SettingEngine
	se.LoggerFactory = &logging.DefaultLoggerFactory{DefaultLogLevel: logging.LogLevelDisabled}
	pc, err := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(se)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, fmt.Errorf("sandbox: peer: %w", err)
	}
	return pc, nil
}

// attach gives the call its outgoing voice track and hooks the peer's
// events to it: the browser's RTP is counted, the oai-events data channel
// starts the script, and a lost connection ends the call. A text session
// gets no voice track (the voice is nil): it sends no audio at all, as a
// provider answering in text only does not.
func (c *call) attach(pc *webrtc.PeerConnection, dc *atomic.Pointer[webrtc.DataChannel]) (*voice, error) {
	var v *voice
	c.speak = func(string, string, time.Duration) {}
	if !c.text {
		track, err := webrtc.NewTrackLocalStaticSample(pcmu, "audio", "sandbox")
		if err != nil {
			return nil, fmt.Errorf("sandbox: track: %w", err)
		}
		sender, err := pc.AddTrack(track)
		if err != nil {
			return nil, fmt.Errorf("sandbox: add track: %w", err)
		}
		v = newVoice(track)
		c.speak = func(_, _ string, d time.Duration) { v.speak(d) }
		go drainRTCP(sender)
	}
	pc.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := t.ReadRTP(); err != nil {
				return
			}
			c.srv.rtpPackets.Add(1)
			c.heard.Add(1)
		}
	})
	pc.OnDataChannel(func(d *webrtc.DataChannel) {
		if d.Label() != "oai-events" {
			return
		}
		d.OnOpen(func() {
			dc.Store(d)
			c.sessionCreated()
			go c.run()
		})
		d.OnMessage(func(msg webrtc.DataChannelMessage) {
			var ev map[string]any
			if json.Unmarshal(msg.Data, &ev) != nil {
				return
			}
			if ev["type"] == "session.update" {
				c.sessionUpdated(ev)
				return
			}
			c.srv.noteMessage(ev)
			select {
			case c.in <- ev:
			default: // a flood of events; the script needs few
			}
		})
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed || st == webrtc.PeerConnectionStateDisconnected {
			c.close()
		}
	})
	return v, nil
}

// localAnswer answers the browser's offer with every ICE candidate
// included, since this endpoint takes no trickled candidates.
func localAnswer(pc *webrtc.PeerConnection) (string, error) {
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		return "", agentline.Invalid("", "no answer to this offer (does it offer PCMU audio?): %v", err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(answer); err != nil {
		return "", fmt.Errorf("sandbox: local description: %w", err)
	}
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
		return "", agentline.Errorf(agentline.EUnavailable, "the sandbox could not gather ICE candidates")
	}
	return pc.LocalDescription().SDP, nil
}

var pcmu = webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000, Channels: 1}

// drainRTCP reads the browser's RTCP so that pion's buffers do not fill.
func drainRTCP(sender *webrtc.RTPSender) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := sender.Read(buf); err != nil {
			return
		}
	}
}
