package testrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/geminilive"
)

// liveSession is a Gemini-kind agent's own Live session (the
// BidiGenerateContent WebSocket its calls use, with its model,
// instructions and tools), played in text: each person's message a
// realtimeInput text, as the phone relay sends text; the answer the
// modelTurn's text parts (thoughts left out) up to turnComplete; each
// toolCall's functionCalls run through the tool facility and answered
// with a toolResponse, as on a call. A connection the service says goAway
// to is replaced by one resuming the session (gemini_resume.go).
//
// The answer is asked for in TEXT when the model gives text. Native-audio
// models answer only in AUDIO (the service closes a setup asking them for
// TEXT with 1007, "Cannot extract voices from a non-audio request"): such
// a model answers in its voice, and the answer is the
// outputAudioTranscription of what it said, the audio left unread. The
// same model that takes the agent's calls is tested either way.
type liveSession struct {
	conn  *liveConn
	agent agentline.Agent
	tools ToolRunner
	audio bool // the answer is the transcription of spoken output
	now   func() time.Time
	log   *slog.Logger

	// What a new connection needs to resume the session.
	hc     *http.Client
	creds  agentline.ProviderCredentials
	setup  geminilive.Setup
	resume resumeState
}

// errTextRefused is a setup asking for TEXT that the model refused.
var errTextRefused = errors.New("the model refused TEXT answers")

// dialLive opens the agent's Live session at creds' base URL, in TEXT
// when its model gives text, else (or when the model refuses TEXT) in
// AUDIO with its output transcribed. The session asks for resumption
// handles, for goAway, and a sliding context window, so that a long run
// outlives a connection and the model's context, as a call does.
func dialLive(ctx context.Context, hc *http.Client, creds agentline.ProviderCredentials, agent agentline.Agent,
	vars map[string]string, tools ToolRunner, log *slog.Logger) (*liveSession, error) {
	defs, err := tools.Definitions(ctx, agent)
	if err != nil {
		return nil, err
	}
	setup := geminilive.Setup{
		Model:                    geminilive.ModelName(agent.Model),
		SystemInstruction:        geminilive.Instructions(agentline.FillVariables(agent.Instructions, vars)),
		Tools:                    agentline.GeminiTools(defs),
		ContextWindowCompression: &geminilive.ContextWindowCompression{},
	}
	audio := geminilive.SpeaksOnly(agent.Model)
	s, err := openLive(ctx, hc, creds, setup.Resuming(""), audio)
	if errors.Is(err, errTextRefused) {
		audio = true
		s, err = openLive(ctx, hc, creds, setup.Resuming(""), audio)
	}
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &liveSession{conn: newLiveConn(s), agent: agent, tools: tools, audio: audio, now: time.Now, log: log,
		hc: hc, creds: creds, setup: setup}, nil
}

// openLive dials, sends the setup and waits for setupComplete, within 15 s.
func openLive(ctx context.Context, hc *http.Client, creds agentline.ProviderCredentials, setup geminilive.Setup, audio bool) (*websocket.Conn, error) {
	setup.ReadAsText(audio)
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, geminilive.URL(creds.BaseURL), &websocket.DialOptions{HTTPClient: hc,
		HTTPHeader: http.Header{"x-goog-api-key": {creds.APIKey}}})
	if err != nil {
		return nil, fmt.Errorf("the agent's Live session: %w", err)
	}
	ws.SetReadLimit(4 << 20)
	if err := ws.Write(dctx, websocket.MessageText, setup.Message()); err != nil {
		ws.CloseNow()
		return nil, fmt.Errorf("the agent's Live session: %w", err)
	}
	for range 100 {
		_, msg, err := ws.Read(dctx)
		if err != nil {
			ws.CloseNow()
			resuming := setup.SessionResumption != nil && setup.SessionResumption.Handle != ""
			if !audio && !resuming && websocket.CloseStatus(err) == websocket.StatusInvalidFramePayloadData {
				return nil, fmt.Errorf("%w: %w", errTextRefused, err)
			}
			return nil, fmt.Errorf("the agent's Live session refused its setup: %w", err)
		}
		var m geminilive.ServerMessage
		if json.Unmarshal(msg, &m) == nil && m.SetupComplete != nil {
			return ws, nil
		}
	}
	ws.CloseNow()
	return nil, errors.New("the agent's Live session sent no setupComplete")
}

func (s *liveSession) Close() { s.conn.close(websocket.StatusNormalClosure, "") }

// Turn sends the person's message and returns the agent's answer with the
// tool calls it made on the way. A connection that ends before the
// answer's turnComplete is replaced once by one resuming the session from
// its last handle, and the message is sent again there.
func (s *liveSession) Turn(ctx context.Context, text string) (string, []agentline.ToolUse, error) {
	if err := s.beforeTurn(ctx); err != nil {
		return "", nil, err
	}
	answer, uses, err := s.play(ctx, text)
	if !errors.Is(err, errConnEnded) || ctx.Err() != nil {
		return answer, uses, err
	}
	s.log.Warn("the agent's Live connection ended during a turn; resuming the session and sending the message again", "err", err)
	if rerr := s.reconnect(ctx); rerr != nil {
		return answer, uses, fmt.Errorf("%w (%w)", err, rerr)
	}
	answer, more, err := s.play(ctx, text)
	return answer, append(uses, more...), err
}

// play sends text on the current connection and reads the answer.
func (s *liveSession) play(ctx context.Context, text string) (string, []agentline.ToolUse, error) {
	if err := s.conn.ws.Write(ctx, websocket.MessageText, geminilive.TextInput(text)); err != nil {
		return "", nil, fmt.Errorf("the agent's Live session: %w: %w", errConnEnded, err)
	}
	var answer, spoken strings.Builder
	var uses []agentline.ToolUse
	canceled := map[string]bool{}
	for rounds := 0; ; {
		m, err := s.next(ctx)
		if err != nil {
			return s.text(&answer, &spoken), uses, err
		}
		if tc := m.ToolCallCancellation; tc != nil {
			for _, id := range tc.IDs {
				canceled[id] = true
			}
		}
		if m.ToolCall != nil {
			if rounds++; rounds > maxToolRounds {
				return s.text(&answer, &spoken), uses, fmt.Errorf("the agent called tools more than %d times in one turn", maxToolRounds)
			}
			done, err := s.runTools(ctx, m.ToolCall.FunctionCalls, canceled)
			uses = append(uses, done...)
			if err != nil {
				return s.text(&answer, &spoken), uses, err
			}
		}
		if sc := m.ServerContent; sc != nil {
			if sc.ModelTurn != nil {
				for _, p := range sc.ModelTurn.Parts {
					if !p.Thought {
						answer.WriteString(p.Text)
					}
				}
			}
			if sc.OutputTranscription != nil {
				spoken.WriteString(sc.OutputTranscription.Text)
			}
			if sc.TurnComplete {
				s.resume.turnComplete()
				return s.text(&answer, &spoken), uses, nil
			}
		}
	}
}

// text is the turn's answer: what the model wrote, or in an AUDIO session
// (or from a server that spoke when asked to write) the transcription of
// what it said.
func (s *liveSession) text(answer, spoken *strings.Builder) string {
	written, said := strings.TrimSpace(answer.String()), strings.TrimSpace(spoken.String())
	if (s.audio && said != "") || written == "" {
		return said
	}
	return written
}

// runTools runs the calls of a toolCall and answers each with a
// toolResponse, unless the model withdrew it meanwhile.
func (s *liveSession) runTools(ctx context.Context, calls []geminilive.FunctionCall, canceled map[string]bool) ([]agentline.ToolUse, error) {
	var uses []agentline.ToolUse
	for _, f := range calls {
		c := f.Call()
		start := s.now()
		res, err := s.tools.Execute(ctx, s.agent, c)
		if err != nil {
			return uses, err
		}
		ms := s.now().Sub(start).Milliseconds()
		uses = append(uses, agentline.ToolUse{CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Result: res.Output,
			IsError: res.IsError, DurationMS: &ms, At: start.UTC()})
		if canceled[c.CallID] {
			continue
		}
		if err := s.conn.ws.Write(ctx, websocket.MessageText, geminilive.ToolResponse(c, res)); err != nil {
			return uses, fmt.Errorf("the agent's Live session: %w: %w", errConnEnded, err)
		}
	}
	return uses, nil
}
