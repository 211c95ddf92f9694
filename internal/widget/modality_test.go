package widget_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentline/agentline"
)

// POST /widget/v1/session takes an optional modality: "text" starts a text
// session (the provider is asked for text answers only), "audio" or none a
// spoken one, as before the field existed; anything else is a 400 naming
// the field. The answer says which it started. The console's test session
// takes the same field.
func TestSessionModality(t *testing.T) {
	e := newEnv(t, envOptions{})
	type answer struct {
		Modality string `json:"modality"`
	}
	lastSession := func() map[string]json.RawMessage {
		t.Helper()
		reqs := e.fake.Requests()
		var body struct {
			Session map[string]json.RawMessage `json:"session"`
		}
		if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
			t.Fatal(err)
		}
		return body.Session
	}
	for _, tc := range []struct {
		name, path, token, key string
		body                   map[string]any
		want                   string
	}{
		{"no modality", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, "audio"},
		{"audio", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID, "modality": "audio"}, "audio"},
		{"text", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID, "modality": "text"}, "text"},
		{"console test by text", fmt.Sprintf("/api/agents/%d/test-session", e.agent.ID), e.owner, "", map[string]any{"modality": "text"}, "text"},
	} {
		// e.do fails the test it was made with: no subtests.
		var a answer
		e.do("POST", tc.path, tc.token, tc.key, tc.body, 201, &a)
		if a.Modality != tc.want {
			t.Errorf("%s: modality answered %q, want %q", tc.name, a.Modality, tc.want)
		}
		s := lastSession()
		_, audio := s["audio"]
		if m := string(s["output_modalities"]); tc.want == "text" && (m != `["text"]` || audio) || tc.want == "audio" && (m != "" || !audio) {
			t.Errorf("%s: provider asked for output_modalities %s (audio settings: %v), want %s", tc.name, m, audio, tc.want)
		}
	}
	// A Gemini-kind agent's text session asks for no voice; its
	// native-audio model, which refuses TEXT, answers in AUDIO with the
	// transcription the browser shows.
	var g answer
	e.do("POST", "/widget/v1/session", "", e.secondKey, map[string]any{"agent_id": e.gemini.ID, "modality": "text"}, 201, &g)
	reqs := e.fake.Requests()
	if body := string(reqs[len(reqs)-1].Body); g.Modality != "text" || !strings.Contains(body, `"responseModalities":["AUDIO"]`) ||
		!strings.Contains(body, `"outputAudioTranscription":{}`) || strings.Contains(body, "speechConfig") || strings.Contains(body, "inputAudioTranscription") {
		t.Errorf("Gemini text session: answered %q, asked %s", g.Modality, body)
	}

	before := len(e.fake.Requests())
	for _, bad := range []any{"video", "TEXT", 1, true} {
		status, code := e.errorCode("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID, "modality": bad})
		if status != 400 || code != agentline.EInvalid {
			t.Errorf("modality %v: %d %s, want 400 invalid_request", bad, status, code)
		}
	}
	resp := e.request("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID, "modality": "video"})
	if body := readAll(resp); !strings.Contains(body, "modality") {
		t.Errorf("the refusal does not name the field: %s", body)
	}
	if n := len(e.fake.Requests()) - before; n != 0 {
		t.Errorf("refused modalities asked the provider %d times", n)
	}
}
