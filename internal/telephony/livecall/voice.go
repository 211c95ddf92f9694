package livecall

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/agentline/agentline"
)

// voiceMapper maps agents' voices with agentline.RealtimeVoice (the same
// mapping as the widget's), logging each unknown name once.
type voiceMapper struct {
	log    *slog.Logger
	mu     sync.Mutex
	warned map[string]bool
}

// realtimeVoice returns the realtime voice for name.
func (m *voiceMapper) realtimeVoice(name string) string {
	return m.mapped(name, agentline.RealtimeVoice)
}

// geminiVoice returns the Gemini Live voice for name.
func (m *voiceMapper) geminiVoice(name string) string {
	return m.mapped(name, agentline.GeminiVoice)
}

// mapped maps name with mapping, logging an unknown name once.
func (m *voiceMapper) mapped(name string, mapping func(string) (string, bool)) string {
	v, known := mapping(name)
	if known {
		return v
	}
	key := strings.ToLower(strings.TrimSpace(name))
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
		m.log.Warn("unknown voice name, using the default voice", "voice", name, "default", v)
	}
	return v
}
