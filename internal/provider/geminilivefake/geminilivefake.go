// Package geminilivefake is an in-process Gemini Live API WebSocket server
// (BidiGenerateContent) for tests, the sandbox and load runs. It speaks the
// real wire protocol over loopback: the key in x-goog-api-key (or ?key=) on
// the v1beta method, or an auth_tokens/ access token on the v1alpha
// constrained one; a setup naming models/{model} first (else close 1007),
// then setupComplete; realtimeInput audio recorded with its sample count;
// toolResponse, clientContent and realtimeInput text recorded; session
// resumption handles issued and checked on reconnect; an auth token's
// setup locked over the client's (Constraints); a native-audio
// model's setup asking for TEXT refused (1007) as the service refuses it.
// PlayText answers a text client's turns (text.go). A test pushes
// serverContent, toolCall, toolCallCancellation, goAway and
// sessionResumptionUpdate messages to a session, in binary frames as the
// real service sends them.
package geminilivefake

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/provider/fakeserver"
)

// The Live API's WebSocket methods, as paths under the base URL.
const (
	// PathLive is the method a server with an API key uses.
	PathLive = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
	// PathConstrained is the method a browser with an ephemeral token uses.
	PathConstrained = "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained"
)

// Server is a fake Live API.
type Server struct {
	// APIKey is the key PathLive accepts.
	APIKey string
	// NeverReady never answers a setup (the socket stays open).
	NeverReady bool
	// Echo answers each realtimeInput audio chunk of 8 kHz PCM with a
	// modelTurn of the same duration at 24 kHz (each sample three times),
	// for load runs; nothing is recorded then.
	Echo bool
	// SpeaksOnly says which models answer only in AUDIO: a setup asking
	// one for TEXT is refused with 1007 as the service refuses it. Nil:
	// the native-audio models (a name with "native-audio").
	SpeaksOnly func(model string) bool
	// Constraints, when set, is the setup an auth token was minted with
	// (providerfake's GeminiSetup), or nil: a session on the constrained
	// method runs with every field it sets, whatever the client's setup
	// says, as the service locks a token's setup.
	Constraints func(token string) json.RawMessage
	// OnSession, when set, runs in its own goroutine for every session
	// once its setupComplete is sent: a script for the session (the
	// widget's tests send a greeting and a tool call from it).
	OnSession func(ctx context.Context, ss *Session)

	srv     *fakeserver.Server[*Session]
	mu      sync.Mutex
	handles map[string]bool // resumption handles issued
	nextID  int
}

// New starts a fake on a loopback port; Close stops it.
func New(apiKey string) *Server {
	s := &Server{APIKey: apiKey, handles: map[string]bool{}}
	s.srv = fakeserver.Start[*Session](s)
	return s
}

// URL is the base URL to use as GEMINI_BASE_URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL() }

// Close closes every session and stops the server.
func (s *Server) Close() { s.srv.Close() }

// Next waits for the next session to connect.
func (s *Server) Next(ctx context.Context) (*Session, error) { return s.srv.Next(ctx) }

// Count returns how many sessions connected so far.
func (s *Server) Count() int { return s.srv.Count() }

// Sessions returns every session so far, in the order they connected.
func (s *Server) Sessions() []*Session { return s.srv.All() }

// ServeHTTP answers the Live API's two WebSocket methods, so a test can
// mount the fake beside other handlers (the token endpoints of
// providerfake). Runs of slashes count as one: @google/genai asks for
// "//ws/..." (its base URL ends with a slash), which the real service
// answers. Anything else is 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var token string
	switch cleanPath(r.URL.Path) {
	case PathLive:
		key := r.Header.Get("x-goog-api-key")
		if key == "" {
			key = r.URL.Query().Get("key")
		}
		if key != s.APIKey {
			http.Error(w, `{"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}`, http.StatusUnauthorized)
			return
		}
	case PathConstrained:
		token = r.URL.Query().Get("access_token")
		if !strings.HasPrefix(token, "auth_tokens/") {
			http.Error(w, "the constrained method needs access_token=auth_tokens/...", http.StatusUnauthorized)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	conn.SetReadLimit(1 << 22)
	ss := &Session{Path: r.URL.Path, Token: token, conn: conn, server: s}
	ss.client = fakeserver.NewClient(conn, &ss.mu)
	s.srv.Add(ss)
	ss.run(r.Context())
}

// issueHandle returns a new resumption handle the server will accept.
func (s *Server) issueHandle() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	h := "resume-" + strconv.Itoa(s.nextID)
	s.handles[h] = true
	return h
}

func (s *Server) knownHandle(h string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handles[h]
}

func cleanPath(p string) string {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	return p
}

// WaitSessions waits until n sessions have connected, up to d.
func (s *Server) WaitSessions(n int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for s.Count() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// speaksOnly says whether the model answers only in AUDIO.
func (s *Server) speaksOnly(model string) bool {
	if s.SpeaksOnly != nil {
		return s.SpeaksOnly(model)
	}
	return strings.Contains(model, "native-audio")
}
