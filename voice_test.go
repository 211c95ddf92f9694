package agentline_test

import (
	"testing"

	"github.com/agentline/agentline"
)

func TestRealtimeVoice(t *testing.T) {
	for name, want := range map[string]struct {
		voice string
		known bool
	}{
		"": {"marin", true}, "cedar": {"cedar", true}, " Nova ": {"coral", true}, "Puck": {"verse", true}, "nonesuch": {"marin", false},
	} {
		if v, known := agentline.RealtimeVoice(name); v != want.voice || known != want.known {
			t.Errorf("RealtimeVoice(%q) = %q, %v; want %q, %v", name, v, known, want.voice, want.known)
		}
	}
}
