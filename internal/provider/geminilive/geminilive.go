// Package geminilive holds the Gemini Live API's (BidiGenerateContent)
// messages as agentline sends and reads them, so that every side that
// opens a Live session (a phone call's relay, a test run's agent, the
// widget's token minting) sets it up and answers its tool calls alike:
// the setup, realtimeInput text, toolResponse, the server messages a
// text session reads, and which resumption handle a connection taking
// over after goAway resumes (the relay and test runs alike). Field names are those of the API's JSON (camelCase).
package geminilive

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/agentline/agentline"
)

// Setup is the Live session's setup (BidiGenerateContentSetup), the first
// message of a connection and the setup an ephemeral token is locked to.
type Setup struct {
	Model                    string                    `json:"model"`
	GenerationConfig         GenerationConfig          `json:"generationConfig"`
	SystemInstruction        *Content                  `json:"systemInstruction,omitempty"`
	Tools                    []agentline.GeminiTool    `json:"tools,omitempty"`
	InputAudioTranscription  *struct{}                 `json:"inputAudioTranscription,omitempty"`
	OutputAudioTranscription *struct{}                 `json:"outputAudioTranscription,omitempty"`
	RealtimeInputConfig      *RealtimeInputConfig      `json:"realtimeInputConfig,omitempty"`
	ContextWindowCompression *ContextWindowCompression `json:"contextWindowCompression,omitempty"`
	SessionResumption        *SessionResumption        `json:"sessionResumption,omitempty"`
}

// GenerationConfig asks for spoken answers in a voice (AUDIO with a
// speechConfig), or for text (TEXT, no speechConfig).
type GenerationConfig struct {
	ResponseModalities []string      `json:"responseModalities"`
	SpeechConfig       *SpeechConfig `json:"speechConfig,omitempty"`
}

// SpeechConfig is the voice and language of spoken answers.
type SpeechConfig struct {
	VoiceConfig struct {
		PrebuiltVoiceConfig struct {
			VoiceName string `json:"voiceName"`
		} `json:"prebuiltVoiceConfig"`
	} `json:"voiceConfig"`
	LanguageCode string `json:"languageCode,omitempty"`
}

// Content is text content such as the system instruction.
type Content struct {
	Parts []Part `json:"parts"`
}

// Part is one part of a content.
type Part struct {
	Text string `json:"text"`
}

// RealtimeInputConfig is how the service detects the caller's turns.
type RealtimeInputConfig struct {
	AutomaticActivityDetection struct {
		Disabled bool `json:"disabled"`
	} `json:"automaticActivityDetection"`
	ActivityHandling string `json:"activityHandling,omitempty"`
}

// ContextWindowCompression keeps a long session under the model's context
// window (a sliding window), which lifts the audio session's time limit.
type ContextWindowCompression struct {
	SlidingWindow struct{} `json:"slidingWindow"`
}

// SessionResumption asks for resumption handles; Handle resumes one.
type SessionResumption struct {
	Handle string `json:"handle,omitempty"`
}

// Resuming is s set up to resume the session of handle ("" for a new
// session that asks for resumption handles): the setup of a connection
// that takes over from one the service said goAway to.
func (s Setup) Resuming(handle string) Setup {
	s.SessionResumption = &SessionResumption{Handle: handle}
	return s
}

// ResumptionUpdate is a sessionResumptionUpdate: the service sends one
// with a new handle when the session may be resumed from that point, and
// with resumable false and no handle while the model generates or runs
// tools (resuming from an older handle then loses what came since).
type ResumptionUpdate struct {
	NewHandle string `json:"newHandle"`
	Resumable bool   `json:"resumable"`
}

// Handle is the update's handle when the session may be resumed from it,
// else "": the one rule for which handle a new connection resumes.
func (u *ResumptionUpdate) Handle() string {
	if u == nil || !u.Resumable {
		return ""
	}
	return u.NewHandle
}

// Instructions is the system instruction of text, or nil for none.
func Instructions(text string) *Content {
	if text == "" {
		return nil
	}
	return &Content{Parts: []Part{{Text: text}}}
}

// Voice is a speech config of the prebuilt voice name and a language
// ("" for the model's choice).
func Voice(name, language string) *SpeechConfig {
	sc := &SpeechConfig{LanguageCode: language}
	sc.VoiceConfig.PrebuiltVoiceConfig.VoiceName = name
	return sc
}

// SpeaksOnly says whether a Live model answers only in AUDIO: the
// native-audio models (a name with "native-audio"), what the Live API
// offers since Google shut its half-cascade models down (9 December
// 2025). The service closes a setup asking one for TEXT with 1007,
// "Cannot extract voices from a non-audio request".
func SpeaksOnly(model string) bool { return strings.Contains(model, "native-audio") }

// ReadAsText sets s up for a client that reads the answers as text: TEXT
// answers, or, when spoken (a model that SpeaksOnly, or one that refused
// TEXT), AUDIO with outputAudioTranscription, whose transcription is then
// the answer's text and whose audio nobody needs to play. Either way no
// voice is asked for.
func (s *Setup) ReadAsText(spoken bool) {
	s.GenerationConfig = GenerationConfig{ResponseModalities: []string{"TEXT"}}
	s.OutputAudioTranscription = nil
	if spoken {
		s.GenerationConfig.ResponseModalities = []string{"AUDIO"}
		s.OutputAudioTranscription = &struct{}{}
	}
}

// ModelName is the setup's model field: models/{model}.
func ModelName(model string) string { return "models/" + strings.TrimPrefix(model, "models/") }

// Message is the setup as the connection's first message.
func (s Setup) Message() []byte {
	b, _ := json.Marshal(map[string]Setup{"setup": s})
	return b
}

// URL is the Live API's WebSocket for a server with an API key
// (BidiGenerateContent, v1beta) at an http(s) base URL; the key goes in
// the x-goog-api-key header, not the URL, so that no log line of a failed
// dial holds it.
func URL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	if u.Scheme == "http" {
		u.Scheme = "ws"
	} else {
		u.Scheme = "wss"
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
	return u.String()
}

// TextInput is a realtimeInput text message: a person's message, what a
// caller pressed, or the cue to speak first. Text goes as realtime input
// rather than clientContent, which some Live models refused after the
// session's start.
func TextInput(text string) []byte {
	b, _ := json.Marshal(map[string]any{"realtimeInput": map[string]string{"text": text}})
	return b
}

// FunctionCall is one call of a toolCall message.
type FunctionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ToolCall is a toolCall message's body.
type ToolCall struct {
	FunctionCalls []FunctionCall `json:"functionCalls"`
}

// Call is f as the tool facility runs it; arguments that are not a JSON
// object become {}.
func (f FunctionCall) Call() agentline.ToolCall {
	args := f.Args
	if !json.Valid(args) || len(args) == 0 || args[0] != '{' {
		args = json.RawMessage("{}")
	}
	return agentline.ToolCall{CallID: f.ID, Name: f.Name, Arguments: args}
}

// ToolResponse answers one function call with the tool's result: its
// output (as JSON when it is JSON, else as a string) under "output", or
// under "error" when the tool failed.
func ToolResponse(call agentline.ToolCall, res agentline.ToolResult) []byte {
	key, value := "output", json.RawMessage(res.Output)
	if res.IsError {
		key = "error"
	}
	if !json.Valid(value) {
		value, _ = json.Marshal(res.Output)
	}
	type response struct {
		ID       string                     `json:"id"`
		Name     string                     `json:"name"`
		Response map[string]json.RawMessage `json:"response"`
	}
	msg, _ := json.Marshal(map[string]any{"toolResponse": map[string]any{
		"functionResponses": []response{{ID: call.CallID, Name: call.Name, Response: map[string]json.RawMessage{key: value}}}}})
	return msg
}

// ServerMessage is the part of a server message a text session reads.
type ServerMessage struct {
	SetupComplete        *struct{}      `json:"setupComplete"`
	ServerContent        *ServerContent `json:"serverContent"`
	ToolCall             *ToolCall      `json:"toolCall"`
	ToolCallCancellation *struct {
		IDs []string `json:"ids"`
	} `json:"toolCallCancellation"`
	GoAway *struct {
		TimeLeft string `json:"timeLeft"`
	} `json:"goAway"`
	SessionResumptionUpdate *ResumptionUpdate `json:"sessionResumptionUpdate"`
}

// ServerContent is the model's output of a turn.
type ServerContent struct {
	ModelTurn *struct {
		Parts []struct {
			Text    string `json:"text"`
			Thought bool   `json:"thought"`
		} `json:"parts"`
	} `json:"modelTurn"`
	OutputTranscription *struct {
		Text string `json:"text"`
	} `json:"outputTranscription"`
	Interrupted  bool `json:"interrupted"`
	TurnComplete bool `json:"turnComplete"`
}
