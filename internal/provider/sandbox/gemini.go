package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/g711"
	"github.com/agentline/agentline/internal/httpx"
)

// GeminiLivePath is the Live API's WebSocket method (BidiGenerateContent,
// v1beta), under GEMINI_BASE_URL's path in sandbox mode.
const GeminiLivePath = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"

// GeminiRoutes serves the sandbox's Gemini side under prefix (e.g.
// /sandbox/gemini, GEMINI_BASE_URL's path): the Live API's WebSocket, as a
// server with an API key opens it for a Gemini-kind agent's phone call.
// The widget's auth tokens are not served: a Gemini-kind agent's browser
// sessions need a real key.
func (s *Server) GeminiRoutes(prefix string) []httpx.Route {
	return []httpx.Route{{Method: "GET", Pattern: prefix + GeminiLivePath, Auth: httpx.ProviderKey, Name: httpx.NameOf(s.live), Handler: httpx.HandlerFunc(s.live)}}
}

// liveSetup is the part of a Live setup the sandbox reads.
type liveSetup struct {
	Model string `json:"model"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	SessionResumption *struct{} `json:"sessionResumption"`
}

// live answers the Live API's WebSocket with the sandbox's script: a
// greeting once told to speak first (or once the caller has spoken), then,
// each time the caller stops speaking, what it "heard"; the first time,
// a function call of the agent's first tool and an answer quoting it.
// Its voice goes as 24 kHz PCM, as Gemini's does.
func (s *Server) live(w http.ResponseWriter, r *http.Request) error {
	key := r.Header.Get("x-goog-api-key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	if key != APIKey {
		return agentline.Errorf(agentline.EUnauthorized, "the sandbox takes the API key %s", APIKey)
	}
	if !isWebSocket(r) {
		return agentline.Invalid("", "the Live API is a WebSocket: open it with an upgrade request")
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return nil // Accept has answered
	}
	conn.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer conn.CloseNow()
	_, first, err := conn.Read(ctx)
	var m struct {
		Setup *liveSetup `json:"setup"`
	}
	if err != nil || json.Unmarshal(first, &m) != nil || m.Setup == nil || !strings.HasPrefix(m.Setup.Model, "models/") {
		conn.Close(websocket.StatusInvalidFramePayloadData, "the first message must be a setup with models/{model}")
		return nil
	}
	s.callCount.Add(1)
	l := &liveCall{conn: conn, ctx: ctx, turns: make(chan string, 8), tools: make(chan string, 1)}
	l.send(map[string]any{"setupComplete": map[string]any{}})
	if m.Setup.SessionResumption != nil {
		handle, _ := randomID("sandbox_session_")
		l.send(map[string]any{"sessionResumptionUpdate": map[string]any{"newHandle": handle, "resumable": true}})
	}
	go l.script(m.Setup, s.pause)
	l.read()
	return nil
}

// liveCall is one Live session of the sandbox.
type liveCall struct {
	conn    *websocket.Conn
	ctx     context.Context
	turns   chan string // "cue" (text input) or "speech" (the caller stopped)
	tools   chan string // toolResponse outputs
	samples int         // voice samples sent, for the waveform's phase
}

func (l *liveCall) send(msg any) {
	b, _ := json.Marshal(msg)
	l.conn.Write(l.ctx, websocket.MessageBinary, b)
}

func (l *liveCall) signal(ch chan string, v string) {
	select {
	case ch <- v:
	default:
	}
}

// read takes the client's messages until the socket closes: caller audio
// (its loudness tells when the caller stops speaking), text cues and tool
// answers.
func (l *liveCall) read() {
	var in struct {
		RealtimeInput *struct {
			Audio *struct {
				Data     string `json:"data"`
				MimeType string `json:"mimeType"`
			} `json:"audio"`
			Text string `json:"text"`
		} `json:"realtimeInput"`
		ToolResponse *struct {
			FunctionResponses []struct {
				Response json.RawMessage `json:"response"`
			} `json:"functionResponses"`
		} `json:"toolResponse"`
	}
	var v vad
	for {
		_, msg, err := l.conn.Read(l.ctx)
		if err != nil {
			return
		}
		in.RealtimeInput, in.ToolResponse = nil, nil
		if json.Unmarshal(msg, &in) != nil {
			continue
		}
		if ri := in.RealtimeInput; ri != nil && ri.Text != "" {
			l.signal(l.turns, "cue")
		}
		if ri := in.RealtimeInput; ri != nil && ri.Audio != nil {
			pcm, _ := base64.StdEncoding.DecodeString(ri.Audio.Data)
			// The vad takes mu-law at 8 kHz; the relay sends 8 kHz PCM.
			mulaw := make([]byte, len(pcm)/2)
			for i := range mulaw {
				mulaw[i] = g711.Encode(int16(binary.LittleEndian.Uint16(pcm[2*i:])))
			}
			if v.feed(mulaw) == speechStopped {
				l.signal(l.turns, "speech")
			}
		}
		if tr := in.ToolResponse; tr != nil && len(tr.FunctionResponses) > 0 {
			l.signal(l.tools, string(tr.FunctionResponses[0].Response))
		}
	}
}

// script plays the conversation.
func (l *liveCall) script(setup *liveSetup, pause time.Duration) {
	wait := func(ch chan string, d time.Duration) (string, bool) {
		select {
		case v := <-ch:
			return v, true
		case <-time.After(d):
			return "", false
		case <-l.ctx.Done():
			return "", false
		}
	}
	if _, ok := wait(l.turns, time.Minute); !ok {
		return
	}
	l.say(sandboxHello)
	tool, args := firstLiveTool(setup)
	for n := 1; ; n++ {
		if _, ok := wait(l.turns, 10*time.Minute); !ok {
			return
		}
		l.send(map[string]any{"serverContent": map[string]any{"inputTranscription": map[string]any{"text": "(something the sandbox cannot understand)"}}})
		if n == 1 && tool != "" {
			l.send(map[string]any{"toolCall": map[string]any{"functionCalls": []any{map[string]any{"id": "sandbox_call_1", "name": tool, "args": json.RawMessage(args)}}}})
			if out, ok := wait(l.tools, 15*time.Second+pause); ok {
				l.say("The tool " + tool + " answered: " + clip(out, 120))
				continue
			}
		}
		l.say("I heard you, but I am only the sandbox.")
	}
}

// say speaks a sentence: its voice in 100 ms deltas of 24 kHz PCM (each
// 8 kHz sample three times), its transcript, and the turn's end.
func (l *liveCall) say(sentence string) {
	d := time.Duration(len(sentence)) * 60 * time.Millisecond
	mulaw := make([]byte, deltaSamples)
	for left := int(d.Seconds() * 8000); left > 0 && l.ctx.Err() == nil; left -= len(mulaw) {
		mulaw = mulaw[:min(left, deltaSamples)]
		fillVoice(mulaw, l.samples)
		l.samples += len(mulaw)
		pcm := make([]byte, 0, 6*len(mulaw))
		for _, u := range mulaw {
			s := uint16(g711.Decode(u))
			pcm = append(pcm, byte(s), byte(s>>8), byte(s), byte(s>>8), byte(s), byte(s>>8))
		}
		l.send(map[string]any{"serverContent": map[string]any{"modelTurn": map[string]any{"parts": []any{
			map[string]any{"inlineData": map[string]any{"mimeType": "audio/pcm;rate=24000", "data": base64.StdEncoding.EncodeToString(pcm)}}}}}})
	}
	l.send(map[string]any{"serverContent": map[string]any{"outputTranscription": map[string]any{"text": sentence}}})
	l.send(map[string]any{"serverContent": map[string]any{"turnComplete": true}})
}

// firstLiveTool is the agent's first tool the script may call, with
// sample arguments: not a phone-only one.
func firstLiveTool(setup *liveSetup) (name, args string) {
	for _, t := range setup.Tools {
		for _, f := range t.FunctionDeclarations {
			if !phoneOnlyTool[f.Name] {
				return f.Name, exampleArguments(f.Name, f.Parameters)
			}
		}
	}
	return "", ""
}
