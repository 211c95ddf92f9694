package livecall

import (
	"log/slog"
	"strings"
	"sync"
)

// DefaultVoice is the realtime voice of agents whose voice is unset or
// unknown; OpenAI recommends marin and cedar for realtime speech.
const DefaultVoice = "marin"

// voices maps voice names (lower case) to a voice the OpenAI realtime API
// takes. Realtime voices map to themselves; older OpenAI voices and Gemini
// voices map to the nearest realtime voice in pitch and manner. docs/phone.md
// shows the same table.
var voices = map[string]string{
	// OpenAI realtime voices.
	"alloy": "alloy", "ash": "ash", "ballad": "ballad", "coral": "coral", "echo": "echo",
	"sage": "sage", "shimmer": "shimmer", "verse": "verse", "marin": "marin", "cedar": "cedar",
	// OpenAI text-to-speech voices the realtime API does not take.
	"fable": "ballad", "onyx": "ash", "nova": "coral",
	// Gemini Live voices.
	"puck": "verse", "charon": "cedar", "kore": "marin", "fenrir": "ash", "aoede": "shimmer",
	"leda": "coral", "orus": "echo", "zephyr": "sage",
}

// voiceMapper maps agents' voices, logging each unknown name once.
type voiceMapper struct {
	log    *slog.Logger
	mu     sync.Mutex
	warned map[string]bool
}

// realtimeVoice returns the realtime voice for name: itself when valid,
// its nearest equivalent from the table, or DefaultVoice.
func (m *voiceMapper) realtimeVoice(name string) string {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		return DefaultVoice
	}
	if v, ok := voices[key]; ok {
		return v
	}
	m.mu.Lock()
	first := !m.warned[key] && len(m.warned) < 1000 // names are agents' settings; bound the memory anyway
	if first {
		if m.warned == nil {
			m.warned = map[string]bool{}
		}
		m.warned[key] = true
	}
	m.mu.Unlock()
	if first {
		m.log.Warn("unknown voice name, using the default realtime voice", "voice", name, "default", DefaultVoice)
	}
	return DefaultVoice
}
