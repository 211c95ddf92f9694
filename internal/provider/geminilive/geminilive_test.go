package geminilive_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/provider/geminilive"
)

// A client reading answers as text asks a native-audio model for AUDIO
// with its output transcribed (it refuses TEXT) and any other model for
// TEXT; never for a voice.
func TestReadAsText(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  string
	}{
		{"gemini-2.5-flash-native-audio-preview-12-2025", `{"setup":{"model":"models/gemini-2.5-flash-native-audio-preview-12-2025","generationConfig":{"responseModalities":["AUDIO"]},"outputAudioTranscription":{}}}`},
		{"models/gemini-live-2.5-flash-preview", `{"setup":{"model":"models/gemini-live-2.5-flash-preview","generationConfig":{"responseModalities":["TEXT"]}}}`},
	} {
		s := geminilive.Setup{Model: geminilive.ModelName(tc.model), GenerationConfig: geminilive.GenerationConfig{
			ResponseModalities: []string{"AUDIO"}, SpeechConfig: geminilive.Voice("Puck", "")}, OutputAudioTranscription: &struct{}{}}
		s.ReadAsText(geminilive.SpeaksOnly(strings.TrimPrefix(tc.model, "models/")))
		if got := string(s.Message()); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.model, got, tc.want)
		}
	}
}
