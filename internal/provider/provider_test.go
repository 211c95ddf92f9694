package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider"
	"github.com/agentline/agentline/internal/provider/providerfake"
)

var tools = []agentline.ToolDefinition{{Name: "lookup_order", Description: "Find an order", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)}}

func agent(p agentline.Provider) agentline.Agent {
	a := agentline.Agent{ID: 7, Name: "Ada", Instructions: "Be brief.", Language: "en-US"}
	if p == agentline.ProviderOpenAI {
		a.Model, a.Provider, a.Voice = "gpt-realtime", p, "marin"
	} else {
		a.Model, a.Provider, a.Voice = "gemini-2.5-flash-native-audio-preview", p, "Puck"
	}
	return a
}

func setup(t *testing.T) (*providerfake.Fake, *httptest.Server) {
	fake := providerfake.New("sk-test", "g-test")
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv
}

func TestOpenAIClientSecret(t *testing.T) {
	fake, srv := setup(t)
	c := provider.New(provider.Config{OpenAIBaseURL: srv.URL + "/", OpenAIAPIKey: "sk-test"}, nil)
	tok, err := c.SessionToken(context.Background(), agent(agentline.ProviderOpenAI), tools, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok.Value, "ek_") || tok.URL != srv.URL+"/v1/realtime/calls" || tok.Protocol != "webrtc" ||
		time.Until(tok.ExpiresAt) < time.Minute || time.Until(tok.ExpiresAt) > 3*time.Minute {
		t.Fatalf("token = %+v", tok)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("OpenAI-Beta") != "" || reqs[0].Header.Get("Authorization") != "Bearer sk-test" {
		t.Fatalf("requests = %+v", reqs)
	}
	var body struct {
		Session struct {
			Type, Model, Instructions string
			Audio                     struct {
				Input struct {
					Transcription struct{ Model, Language string }
				}
				Output struct{ Voice string }
			}
			Tools []agentline.OpenAITool
		}
	}
	json.Unmarshal(reqs[0].Body, &body)
	s := body.Session
	if s.Type != "realtime" || s.Model != "gpt-realtime" || s.Instructions != "Be brief." || s.Audio.Output.Voice != "marin" ||
		s.Audio.Input.Transcription.Model == "" || s.Audio.Input.Transcription.Language != "en" ||
		len(s.Tools) != 1 || s.Tools[0].Type != "function" || s.Tools[0].Name != "lookup_order" {
		t.Fatalf("session sent = %s", reqs[0].Body)
	}
}

func TestGeminiAuthToken(t *testing.T) {
	fake, srv := setup(t)
	c := provider.New(provider.Config{GeminiBaseURL: srv.URL, GeminiAPIKey: "g-test"}, nil)
	tok, err := c.SessionToken(context.Background(), agent(agentline.ProviderGemini), tools, provider.Audio)
	if err != nil {
		t.Fatal(err)
	}
	wantURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained"
	if !strings.HasPrefix(tok.Value, "auth_tokens/") || tok.URL != wantURL || tok.Protocol != "websocket" ||
		time.Until(tok.ExpiresAt) > 2*time.Minute || time.Until(tok.ExpiresAt) < 30*time.Second {
		t.Fatalf("token = %+v", tok)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("X-Goog-Api-Key") != "g-test" || reqs[0].Header.Get("Authorization") != "" {
		t.Fatalf("requests = %+v", reqs)
	}
	var body struct {
		Uses int
		// The setup itself, as @google/genai posts it: no "setup" wrapper.
		BidiGenerateContentSetup struct {
			Model             string
			SystemInstruction struct{ Parts []struct{ Text string } }
			GenerationConfig  struct {
				ResponseModalities []string
				SpeechConfig       struct {
					VoiceConfig struct{ PrebuiltVoiceConfig struct{ VoiceName string } }
				}
			}
			Tools                   []agentline.GeminiTool
			InputAudioTranscription *struct{}
		}
	}
	json.Unmarshal(reqs[0].Body, &body)
	if strings.Contains(string(reqs[0].Body), `"setup"`) {
		t.Fatalf("body sent wraps the setup: %s", reqs[0].Body)
	}
	s := body.BidiGenerateContentSetup
	if body.Uses != 1 || s.Model != "models/gemini-2.5-flash-native-audio-preview" || s.SystemInstruction.Parts[0].Text != "Be brief." ||
		s.GenerationConfig.SpeechConfig.VoiceConfig.PrebuiltVoiceConfig.VoiceName != "Puck" || s.GenerationConfig.ResponseModalities[0] != "AUDIO" ||
		len(s.Tools) != 1 || s.Tools[0].FunctionDeclarations[0].Name != "lookup_order" || s.InputAudioTranscription == nil {
		t.Fatalf("body sent = %s", reqs[0].Body)
	}
}

// A text session asks for text answers only: OpenAI's output_modalities
// ["text"] with no audio settings; Gemini's no voice and no transcription
// of the visitor, and TEXT answers from a model that gives text, but
// AUDIO with outputAudioTranscription from a native-audio model, which
// refuses TEXT (the browser shows the transcription, plays nothing).
func TestTextSessionTokens(t *testing.T) {
	fake, srv := setup(t)
	c := provider.New(provider.Config{OpenAIBaseURL: srv.URL, OpenAIAPIKey: "sk-test", GeminiBaseURL: srv.URL, GeminiAPIKey: "g-test"}, nil)
	if _, err := c.SessionToken(context.Background(), agent(agentline.ProviderOpenAI), tools, provider.Text); err != nil {
		t.Fatal(err)
	}
	halfCascade := agent(agentline.ProviderGemini)
	halfCascade.Model = "gemini-live-2.5-flash-preview"
	for _, a := range []agentline.Agent{agent(agentline.ProviderGemini), halfCascade} {
		if _, err := c.SessionToken(context.Background(), a, tools, provider.Text); err != nil {
			t.Fatal(err)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	var openai struct {
		Session map[string]json.RawMessage
	}
	json.Unmarshal(reqs[0].Body, &openai)
	if m := string(openai.Session["output_modalities"]); m != `["text"]` {
		t.Errorf("output_modalities %s, want [\"text\"]: %s", m, reqs[0].Body)
	}
	if _, ok := openai.Session["audio"]; ok || len(openai.Session["tools"]) < 10 || string(openai.Session["instructions"]) != `"Be brief."` {
		t.Errorf("text session sent = %s", reqs[0].Body)
	}
	for i, want := range []struct {
		modality string
		out      bool
	}{{`["AUDIO"]`, true}, {`["TEXT"]`, false}} {
		body := reqs[1+i].Body
		var gemini struct {
			BidiGenerateContentSetup map[string]json.RawMessage
		}
		json.Unmarshal(body, &gemini)
		setup := gemini.BidiGenerateContentSetup
		var gc map[string]json.RawMessage
		json.Unmarshal(setup["generationConfig"], &gc)
		if m := string(gc["responseModalities"]); m != want.modality {
			t.Errorf("responseModalities %s, want %s: %s", m, want.modality, body)
		}
		_, speech := gc["speechConfig"]
		_, in := setup["inputAudioTranscription"]
		_, out := setup["outputAudioTranscription"]
		if speech || in || out != want.out || len(setup["tools"]) < 10 || len(setup["systemInstruction"]) == 0 {
			t.Errorf("text setup sent = %s", body)
		}
	}
}

func TestFailures(t *testing.T) {
	fake, srv := setup(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	tests := []struct {
		name  string
		cfg   provider.Config
		p     agentline.Provider
		fail  int
		want  string
		model string
	}{
		{name: "openai key missing", cfg: provider.Config{OpenAIBaseURL: srv.URL}, p: agentline.ProviderOpenAI, want: agentline.ENotConfigured},
		{name: "gemini key missing", cfg: provider.Config{GeminiBaseURL: srv.URL}, p: agentline.ProviderGemini, want: agentline.ENotConfigured},
		{name: "openai wrong key", cfg: provider.Config{OpenAIBaseURL: srv.URL, OpenAIAPIKey: "nope"}, p: agentline.ProviderOpenAI, want: agentline.EProvider},
		{name: "gemini wrong key", cfg: provider.Config{GeminiBaseURL: srv.URL, GeminiAPIKey: "nope"}, p: agentline.ProviderGemini, want: agentline.EProvider},
		{name: "openai outage", cfg: provider.Config{OpenAIBaseURL: srv.URL, OpenAIAPIKey: "sk-test"}, p: agentline.ProviderOpenAI, fail: 500, want: agentline.EProvider},
		{name: "gemini outage", cfg: provider.Config{GeminiBaseURL: srv.URL, GeminiAPIKey: "g-test"}, p: agentline.ProviderGemini, fail: 503, want: agentline.EProvider},
		{name: "unreachable", cfg: provider.Config{OpenAIBaseURL: dead.URL, OpenAIAPIKey: "sk-test"}, p: agentline.ProviderOpenAI, want: agentline.EProvider},
		{name: "unknown provider", cfg: provider.Config{}, p: "other", want: agentline.EUnsupportedProvider},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.FailWith(tt.fail)
			defer fake.FailWith(0)
			a := agent(agentline.ProviderOpenAI)
			if tt.p == agentline.ProviderGemini {
				a = agent(tt.p)
			}
			a.Provider = tt.p
			_, err := provider.New(tt.cfg, nil).SessionToken(context.Background(), a, nil, "")
			if agentline.ErrorCode(err) != tt.want {
				t.Fatalf("err = %v, want code %s", err, tt.want)
			}
			// The message a client sees names neither key nor provider answer.
			if msg := agentline.ErrorMessage(err); strings.Contains(msg, "sk-test") || strings.Contains(msg, "Incorrect") {
				t.Fatalf("message leaks: %q", msg)
			}
		})
	}
}

func TestFakeRejectsBadShapes(t *testing.T) {
	_, srv := setup(t)
	tests := []struct {
		name, path, body string
		header           map[string]string
		status           int
	}{
		{"openai beta header", "/v1/realtime/client_secrets", `{"session":{"type":"realtime","model":"gpt-realtime"}}`, map[string]string{"Authorization": "Bearer sk-test", "OpenAI-Beta": "realtime=v1"}, 400},
		{"openai no session", "/v1/realtime/client_secrets", `{}`, map[string]string{"Authorization": "Bearer sk-test"}, 400},
		{"openai unknown field", "/v1/realtime/client_secrets", `{"session":{"type":"realtime","model":"m"},"x":1}`, map[string]string{"Authorization": "Bearer sk-test"}, 400},
		{"openai ok", "/v1/realtime/client_secrets", `{"session":{"type":"realtime","model":"m"}}`, map[string]string{"Authorization": "Bearer sk-test"}, 200},
		{"gemini bearer instead of key", "/v1alpha/auth_tokens", `{}`, map[string]string{"Authorization": "Bearer g-test"}, 400},
		{"gemini bad model", "/v1alpha/auth_tokens", `{"bidiGenerateContentSetup":{"model":"gemini-x"}}`, map[string]string{"x-goog-api-key": "g-test"}, 400},
		{"gemini setup wrapper", "/v1alpha/auth_tokens", `{"uses":1,"bidiGenerateContentSetup":{"setup":{"model":"models/gemini-x"}}}`, map[string]string{"x-goog-api-key": "g-test"}, 400},
		{"gemini unknown setup field", "/v1alpha/auth_tokens", `{"uses":1,"bidiGenerateContentSetup":{"model":"models/gemini-x","voice":"Puck"}}`, map[string]string{"x-goog-api-key": "g-test"}, 400},
		{"gemini ok", "/v1alpha/auth_tokens", `{"uses":1,"bidiGenerateContentSetup":{"model":"models/gemini-x","generationConfig":{"responseModalities":["AUDIO"]}}}`, map[string]string{"x-goog-api-key": "g-test"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", srv.URL+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
}

// A provider's refusal is logged without the key it may repeat.
func TestRefusalDetailHasNoKey(t *testing.T) {
	const key = "sk-secret-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided: ` + key + ` (sk-secret-012345****)"}}`))
	}))
	defer srv.Close()
	for _, kind := range []agentline.Provider{agentline.ProviderOpenAI, agentline.ProviderGemini} {
		c := provider.New(provider.Config{OpenAIBaseURL: srv.URL, OpenAIAPIKey: key, GeminiBaseURL: srv.URL, GeminiAPIKey: key}, nil)
		model := "gpt-realtime"
		if kind == agentline.ProviderGemini {
			model = "gemini-2.5-flash-native-audio"
		}
		_, err := c.SessionToken(context.Background(), agentline.Agent{Provider: kind, Model: model}, nil, "")
		var e *agentline.Error
		if !errors.As(err, &e) || e.Err == nil || strings.Contains(e.Err.Error()+e.Message, "sk-secret") {
			t.Errorf("%s: %v (%v)", kind, err, e)
		}
	}
}
