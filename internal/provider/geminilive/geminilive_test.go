package geminilive_test

import (
	"encoding/json"
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

// Only a resumable update's handle resumes a session; a resuming setup
// carries it, and a new one asks for handles with an empty
// sessionResumption.
func TestResumption(t *testing.T) {
	var m geminilive.ServerMessage
	for msg, want := range map[string]string{
		`{"sessionResumptionUpdate":{"newHandle":"h1","resumable":true}}`: "h1",
		`{"sessionResumptionUpdate":{"resumable":false}}`:                 "",
		`{"sessionResumptionUpdate":{"newHandle":"h2"}}`:                  "",
		`{"goAway":{"timeLeft":"10s"}}`:                                   "",
	} {
		m = geminilive.ServerMessage{}
		if err := json.Unmarshal([]byte(msg), &m); err != nil {
			t.Fatal(err)
		}
		if got := m.SessionResumptionUpdate.Handle(); got != want {
			t.Errorf("%s: handle %q, want %q", msg, got, want)
		}
	}
	s := geminilive.Setup{Model: "models/m"}
	if got := string(s.Resuming("h1").Message()); !strings.Contains(got, `"sessionResumption":{"handle":"h1"}`) {
		t.Errorf("resuming setup %s", got)
	}
	if got := string(s.Resuming("").Message()); !strings.Contains(got, `"sessionResumption":{}`) || s.SessionResumption != nil {
		t.Errorf("new setup %s (the original's resumption %v)", got, s.SessionResumption)
	}
}
