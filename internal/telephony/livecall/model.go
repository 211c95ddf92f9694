package livecall

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider"
	"github.com/agentline/agentline/internal/provider/geminilive"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// account is where the agent's calls go: the base URL and key of its
// project's own provider account of the agent's kind, else the
// deployment's; read once per call, never per frame. A call needs its
// realtime model, so a missing key is ENotConfigured.
func (h *Handler) account(ctx context.Context, a agentline.Agent) (agentline.ProviderCredentials, error) {
	creds, err := h.creds.Credentials(ctx, a.ProjectID, a.Provider)
	if err != nil {
		return creds, err
	}
	if creds.APIKey == "" {
		if a.Provider == agentline.ProviderGemini {
			return creds, agentline.Errorf(agentline.ENotConfigured, "no Gemini-compatible key: calls of a Gemini-compatible agent need its Live API (a provider account of the project, or GEMINI_API_KEY)")
		}
		return creds, agentline.Errorf(agentline.ENotConfigured, "no OpenAI-compatible key: calls need a realtime model (a provider account of the project, or OPENAI_API_KEY)")
	}
	return creds, nil
}

// CheckConfigured says whether the agent's provider can be reached: a
// call needs its realtime model.
func (h *Handler) CheckConfigured(ctx context.Context, a agentline.Agent) error {
	_, err := h.account(ctx, a)
	return err
}

// dialer is how a call's model sockets are opened: a base URL a project
// gave is checked by the outgoing address policy on every address dialed,
// unless private addresses are allowed; the deployment's is trusted.
func (h *Handler) dialer(creds agentline.ProviderCredentials) func(context.Context, string, *websocket.DialOptions) (*relay.Socket, *http.Response, error) {
	if creds.Project && !h.allowPrivate {
		return relay.DialChecked
	}
	return relay.Dial
}

// modelSide is how a call reaches its agent's model: the first socket's
// dial, and what the relay's options need for the model's kind.
type modelSide struct {
	dial func(ctx context.Context) (*relay.Socket, error)
	// opts fills in the relay's options for the model's protocol.
	opts func(o *relay.Options)
}

// modelFor prepares the model side of a call of agent (its variables
// filled) offering defs.
func (h *Handler) modelFor(ctx context.Context, sc *streamCall, defs []agentline.ToolDefinition) (modelSide, error) {
	agent := sc.agent
	creds, err := h.account(ctx, agent)
	if err != nil {
		return modelSide{}, err
	}
	base, key, dialWS := creds.BaseURL, creds.APIKey, h.dialer(creds)
	if agent.Provider == agentline.ProviderGemini {
		setup := h.geminiSetup(agent, defs)
		dial := func(ctx context.Context) (*relay.Socket, error) {
			s, _, err := dialWS(ctx, geminilive.URL(base), &websocket.DialOptions{HTTPHeader: http.Header{"x-goog-api-key": {key}}})
			if err == nil {
				s.SetReadLimit(1 << 22)
			}
			return s, err
		}
		speak := speakFirstText(agent, sc.claims.Direction)
		return modelSide{dial: dial, opts: func(o *relay.Options) {
			o.Gemini = &relay.GeminiOptions{Setup: setup, Dial: dial}
			if speak != "" {
				o.SpeakFirst = geminilive.TextInput(speak)
			}
		}}, nil
	}
	update, err := h.sessionUpdate(agent, defs)
	if err != nil {
		return modelSide{}, err
	}
	dial := func(ctx context.Context) (*relay.Socket, error) {
		s, _, err := dialWS(ctx, provider.RealtimeURL(base, agent.Model), &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + key}},
		})
		if err == nil {
			s.SetReadLimit(1 << 22)
		}
		return s, err
	}
	first := speakFirst(agent, sc.claims.Direction)
	return modelSide{dial: dial, opts: func(o *relay.Options) {
		o.SessionUpdate, o.SpeakFirst = update, first
	}}, nil
}

// dialModel opens the call's first model socket, within 10 s.
func dialModel(ctx context.Context, m modelSide) (*relay.Socket, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return m.dial(ctx)
}

// geminiSetup returns the setup of a call's Live session, resuming a
// session when handle is set: spoken answers in the agent's voice, its
// instructions and tools, both sides transcribed, the service's voice
// activity detection, a sliding context window so that a long call is
// not cut at the audio-only session limit, and resumption handles for the
// connection's goAway.
func (h *Handler) geminiSetup(agent agentline.Agent, defs []agentline.ToolDefinition) func(handle string) []byte {
	setup := geminilive.Setup{
		Model: geminilive.ModelName(agent.Model),
		GenerationConfig: geminilive.GenerationConfig{ResponseModalities: []string{"AUDIO"},
			SpeechConfig: geminilive.Voice(h.voices.geminiVoice(agent.Voice), agent.Language)},
		SystemInstruction:        geminilive.Instructions(agent.Instructions + phoneInstructions),
		Tools:                    agentline.GeminiTools(defs),
		InputAudioTranscription:  &struct{}{},
		OutputAudioTranscription: &struct{}{},
		RealtimeInputConfig:      &geminilive.RealtimeInputConfig{ActivityHandling: "START_OF_ACTIVITY_INTERRUPTS"},
		ContextWindowCompression: &geminilive.ContextWindowCompression{},
	}
	return func(handle string) []byte { return setup.Resuming(handle).Message() }
}

// speakFirstText is what the agent is told to make it talk before the
// caller: on outbound calls, and on inbound calls of agents with a
// greeting; "" when the caller speaks first.
func speakFirstText(agent agentline.Agent, direction string) string {
	switch {
	case agent.Greeting != "":
		return agentline.GreetingInstructions(agent.Greeting)
	case direction == agentline.CallOutbound:
		return "You placed this call and the person has just answered. Greet them and say why you are calling, following your instructions."
	}
	return ""
}
