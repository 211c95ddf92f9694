package geminilivefake

import (
	"encoding/json"
	"maps"
	"strings"
)

// Setup is the part of a client's setup message the fake reads (field
// names as in BidiGenerateContentSetup).
type Setup struct {
	Model            string `json:"model"`
	GenerationConfig struct {
		ResponseModalities []string `json:"responseModalities"`
		SpeechConfig       *struct {
			VoiceConfig struct {
				PrebuiltVoiceConfig struct {
					VoiceName string `json:"voiceName"`
				} `json:"prebuiltVoiceConfig"`
			} `json:"voiceConfig"`
			LanguageCode string `json:"languageCode"`
		} `json:"speechConfig"`
	} `json:"generationConfig"`
	SystemInstruction *struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"systemInstruction"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	InputAudioTranscription  json.RawMessage `json:"inputAudioTranscription"`
	OutputAudioTranscription json.RawMessage `json:"outputAudioTranscription"`
	RealtimeInputConfig      json.RawMessage `json:"realtimeInputConfig"`
	SessionResumption        *struct {
		Handle string `json:"handle"`
	} `json:"sessionResumption"`
	ContextWindowCompression *struct {
		SlidingWindow json.RawMessage `json:"slidingWindow"`
	} `json:"contextWindowCompression"`
}

// Instructions is the text of the system instruction.
func (s Setup) Instructions() string {
	if s.SystemInstruction == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range s.SystemInstruction.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Voice is the prebuilt voice the setup asks for.
func (s Setup) Voice() string {
	if s.GenerationConfig.SpeechConfig == nil {
		return ""
	}
	return s.GenerationConfig.SpeechConfig.VoiceConfig.PrebuiltVoiceConfig.VoiceName
}

// ToolNames are the names of every function declared.
func (s Setup) ToolNames() []string {
	var out []string
	for _, t := range s.Tools {
		for _, f := range t.FunctionDeclarations {
			out = append(out, f.Name)
		}
	}
	return out
}

// locked is the setup a session on the constrained method runs with: the
// client's, with every field of the token's setup in its place (a token
// minted with a setup locks it; the service ignores the client's values).
func locked(client, token json.RawMessage) json.RawMessage {
	var c, t map[string]json.RawMessage
	if json.Unmarshal(client, &c) != nil || c == nil || json.Unmarshal(token, &t) != nil {
		return client
	}
	maps.Copy(c, t)
	b, _ := json.Marshal(c)
	return b
}
