package agentline

import "strings"

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
