package agentline

import (
	"slices"
	"strings"
)

// DefaultRealtimeVoice is the OpenAI realtime voice of agents whose voice is
// unset or unknown; OpenAI recommends marin and cedar for realtime speech.
const DefaultRealtimeVoice = "marin"

// realtimeVoices maps voice names (lower case) to a voice the OpenAI
// realtime API takes. Realtime voices map to themselves; older OpenAI voices
// and Gemini voices map to the nearest realtime voice in pitch and manner.
// The phone path and the widget's client secrets both use it, so an agent
// sounds the same on both; docs/phone.md shows the same table.
var realtimeVoices = map[string]string{
	// OpenAI realtime voices.
	"alloy": "alloy", "ash": "ash", "ballad": "ballad", "coral": "coral", "echo": "echo",
	"sage": "sage", "shimmer": "shimmer", "verse": "verse", "marin": "marin", "cedar": "cedar",
	// OpenAI text-to-speech voices the realtime API does not take.
	"fable": "ballad", "onyx": "ash", "nova": "coral",
	// Gemini Live voices.
	"puck": "verse", "charon": "cedar", "kore": "marin", "fenrir": "ash", "aoede": "shimmer",
	"leda": "coral", "orus": "echo", "zephyr": "sage",
}

// RealtimeVoice returns the OpenAI realtime voice for an agent's voice name:
// itself when valid, its nearest equivalent from the table, or
// DefaultRealtimeVoice. known is false for a set name the table lacks, so
// that callers can say so in their log.
func RealtimeVoice(name string) (voice string, known bool) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		return DefaultRealtimeVoice, true
	}
	if v, ok := realtimeVoices[key]; ok {
		return v, true
	}
	return DefaultRealtimeVoice, false
}

// DefaultGeminiVoice is the Gemini Live voice of agents whose voice is
// unset or unknown.
const DefaultGeminiVoice = "Puck"

// openAIToGemini maps OpenAI's voices (lower case) to the nearest Gemini
// Live voice, the reverse of realtimeVoices' Gemini rows, so that an
// agent moved from one provider to the other keeps a similar voice.
var openAIToGemini = map[string]string{
	"marin": "Kore", "cedar": "Charon", "alloy": "Kore", "ash": "Fenrir", "ballad": "Charon", "coral": "Leda",
	"echo": "Orus", "sage": "Zephyr", "shimmer": "Aoede", "verse": "Puck", "fable": "Puck", "onyx": "Fenrir", "nova": "Leda",
}

// GeminiVoice returns the Gemini Live prebuilt voice for an agent's voice
// name: a Gemini voice as the catalog spells it, an OpenAI voice's nearest
// Gemini voice, or DefaultGeminiVoice. known is false for a set name
// neither provider has, so that callers can say so in their log. The
// phone path uses it for Gemini-kind agents' calls.
func GeminiVoice(name string) (voice string, known bool) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		return DefaultGeminiVoice, true
	}
	for _, v := range providerVoices[ProviderGemini] {
		if strings.ToLower(v) == key {
			return v, true
		}
	}
	if v, ok := openAIToGemini[key]; ok {
		return v, true
	}
	return DefaultGeminiVoice, false
}

// KnownModels returns the models the console offers, per provider. Other
// names matching ProviderForModel's patterns are accepted too (a provider's
// new model works before this list names it). It is a copy, like
// Voices: no caller can change the catalog another one reads.
func KnownModels() []ModelChoice { return slices.Clone(knownModels) }

var knownModels = []ModelChoice{
	{Name: "gpt-realtime", Provider: ProviderOpenAI},
	{Name: "gpt-realtime-mini", Provider: ProviderOpenAI},
	{Name: "gpt-4o-realtime-preview", Provider: ProviderOpenAI},
	{Name: "gpt-4o-mini-realtime-preview", Provider: ProviderOpenAI},
	{Name: "gemini-live-2.5-flash-preview", Provider: ProviderGemini},
	{Name: "gemini-2.5-flash-native-audio-preview-09-2025", Provider: ProviderGemini},
}

// ModelChoice is one model and the provider that runs it.
type ModelChoice struct {
	Name     string   `json:"name"`
	Provider Provider `json:"provider"`
}

// VoiceChoice is one voice a provider speaks in, and the OpenAI realtime
// voice it becomes where the realtime API speaks for the agent (phone calls,
// and OpenAI sessions of an agent with another provider's voice name).
type VoiceChoice struct {
	Name          string   `json:"name"`
	Provider      Provider `json:"provider"`
	RealtimeVoice string   `json:"realtime_voice"`
}

// providerVoices lists each provider's own voices, in the order a picker
// shows them: OpenAI's realtime voices (recommended ones first), then its
// text-to-speech voices; Gemini Live's prebuilt voices.
var providerVoices = map[Provider][]string{
	ProviderOpenAI: {"marin", "cedar", "alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "fable", "onyx", "nova"},
	ProviderGemini: {"Puck", "Charon", "Kore", "Fenrir", "Aoede", "Leda", "Orus", "Zephyr"},
}

// Voices lists the voices of every provider with their realtime mapping,
// OpenAI's first: what the console's voice picker offers.
func Voices() []VoiceChoice {
	var out []VoiceChoice
	for _, p := range []Provider{ProviderOpenAI, ProviderGemini} {
		for _, name := range providerVoices[p] {
			rt, _ := RealtimeVoice(name)
			out = append(out, VoiceChoice{Name: name, Provider: p, RealtimeVoice: rt})
		}
	}
	return out
}

// CatalogVoice checks that name is one of provider p's voices in the
// catalog (GET /api/catalog, the console's picker), in any case, and
// returns it spelled as the catalog does. Any other name is refused,
// listing the provider's voices: a name the provider does not know would
// otherwise fall back silently to a default on phone calls.
func CatalogVoice(p Provider, model, name string) (string, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	for _, v := range providerVoices[p] {
		if strings.ToLower(v) == key {
			return v, nil
		}
	}
	return "", Invalid("voice", "unknown voice %q for model %s: use one of %s", name, model, strings.Join(providerVoices[p], ", "))
}
