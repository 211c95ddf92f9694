// Package providerfake is an in-process stand-in for the realtime providers'
// token endpoints: OpenAI's POST /v1/realtime/client_secrets and Gemini's
// POST /v1alpha/auth_tokens, and their model lists (GET /v1/models, GET
// /v1beta/models), which a key is checked with when it is saved. Like the real services it checks the auth
// header and the body's shape and answers errors in their formats; it
// records every request so tests can see what was sent. Serve it with
// httptest.NewServer(fake) and point OPENAI_BASE_URL / GEMINI_BASE_URL at it.
package providerfake

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Request is one request the fake received.
type Request struct {
	Path   string
	Header http.Header
	Body   json.RawMessage
}

// Fake serves both providers' token endpoints.
type Fake struct {
	openAIKey, geminiKey string

	mu       sync.Mutex
	requests []Request
	setups   map[string]json.RawMessage // auth token name -> its bidiGenerateContentSetup
	failWith int
	now      func() time.Time
}

// New returns a fake that accepts these API keys.
func New(openAIKey, geminiKey string) *Fake {
	return &Fake{openAIKey: openAIKey, geminiKey: geminiKey, now: time.Now}
}

// Requests returns what the fake received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// GeminiSetup is the bidiGenerateContentSetup the auth token named token
// was minted with, or nil: what a fake Live socket's constrained method
// locks a session to (geminilivefake.Server.Constraints).
func (f *Fake) GeminiSetup(token string) json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.setups[token]
}

// FailWith makes the following requests fail with status (0: succeed again),
// as a provider outage would.
func (f *Fake) FailWith(status int) {
	f.mu.Lock()
	f.failWith = status
	f.mu.Unlock()
}

// ServeHTTP routes to the two endpoints.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f.mu.Lock()
	f.requests = append(f.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: json.RawMessage(body)})
	fail := f.failWith
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/realtime/client_secrets":
		if fail != 0 {
			openAIError(w, fail, "server_error", "The server had an error while processing your request.")
			return
		}
		f.clientSecret(w, r, body)
	case r.Method == http.MethodPost && r.URL.Path == "/v1alpha/auth_tokens":
		if fail != 0 {
			googleError(w, fail, "INTERNAL", "Internal error encountered.")
			return
		}
		f.authToken(w, r, body)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		f.openAIModels(w, r, fail)
	case r.Method == http.MethodGet && r.URL.Path == "/v1beta/models":
		f.geminiModels(w, r, fail)
	default:
		http.NotFound(w, r)
	}
}

// openAIModels answers the model list as OpenAI does: 401 with its
// message, which repeats the refused key partly masked, for a wrong key.
func (f *Fake) openAIModels(w http.ResponseWriter, r *http.Request, fail int) {
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case fail != 0:
		openAIError(w, fail, "server_error", "The server had an error while processing your request.")
	case key != f.openAIKey || f.openAIKey == "":
		openAIError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided: "+mask(key)+". You can find your API key at https://platform.openai.com/account/api-keys.")
	default:
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{{"id": "gpt-realtime", "object": "model", "owned_by": "system"}}})
	}
}

// geminiModels answers the model list as the Gemini API does: 400
// INVALID_ARGUMENT for a wrong key.
func (f *Fake) geminiModels(w http.ResponseWriter, r *http.Request, fail int) {
	switch {
	case fail != 0:
		googleError(w, fail, "INTERNAL", "Internal error encountered.")
	case r.Header.Get("x-goog-api-key") != f.geminiKey || f.geminiKey == "":
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
	default:
		writeJSON(w, http.StatusOK, map[string]any{"models": []map[string]any{{"name": "models/gemini-live-2.5-flash-preview"}}})
	}
}

// mask shows a key as OpenAI's refusal does: its start and end.
func mask(key string) string {
	if len(key) < 8 {
		return key
	}
	return key[:3] + strings.Repeat("*", len(key)-7) + key[len(key)-4:]
}

func (f *Fake) clientSecret(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get("Authorization") != "Bearer "+f.openAIKey || f.openAIKey == "" {
		openAIError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
		return
	}
	if r.Header.Get("OpenAI-Beta") != "" {
		openAIError(w, http.StatusBadRequest, "beta_api_shape_disabled", "The beta realtime API shape is no longer supported.")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "Content-Type must be application/json.")
		return
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_json", "We could not parse the JSON body of your request.")
		return
	}
	if msg := unknownKeys(in, "expires_after", "session"); msg != "" {
		openAIError(w, http.StatusBadRequest, "unknown_parameter", "Unknown parameter: '"+msg+"'.")
		return
	}
	seconds := 600
	if raw, ok := in["expires_after"]; ok {
		var ea struct {
			Anchor  string `json:"anchor"`
			Seconds int    `json:"seconds"`
		}
		if err := strictUnmarshal(raw, &ea); err != nil || ea.Anchor != "created_at" || ea.Seconds < 10 || ea.Seconds > 7200 {
			openAIError(w, http.StatusBadRequest, "invalid_value", "expires_after needs anchor 'created_at' and seconds between 10 and 7200.")
			return
		}
		seconds = ea.Seconds
	}
	var session map[string]json.RawMessage
	if err := json.Unmarshal(in["session"], &session); err != nil || session == nil {
		openAIError(w, http.StatusBadRequest, "missing_required_parameter", "Missing required parameter: 'session'.")
		return
	}
	var typ, model string
	json.Unmarshal(session["type"], &typ)
	json.Unmarshal(session["model"], &model)
	if typ != "realtime" && typ != "transcription" {
		openAIError(w, http.StatusBadRequest, "invalid_value", "session.type must be 'realtime' or 'transcription'.")
		return
	}
	if typ == "realtime" && model == "" {
		openAIError(w, http.StatusBadRequest, "missing_required_parameter", "Missing required parameter: 'session.model'.")
		return
	}
	if raw, ok := session["tools"]; ok {
		var tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &tools); err != nil {
			openAIError(w, http.StatusBadRequest, "invalid_type", "session.tools must be an array.")
			return
		}
		for _, t := range tools {
			if t.Type != "function" || t.Name == "" {
				openAIError(w, http.StatusBadRequest, "invalid_value", "each tool needs type 'function' and a name.")
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"value":      "ek_" + random(24),
		"expires_at": f.now().Add(time.Duration(seconds) * time.Second).Unix(),
		"session":    session,
	})
}

func (f *Fake) authToken(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Header.Get("x-goog-api-key") != f.geminiKey || f.geminiKey == "" {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received.")
		return
	}
	if msg := unknownKeys(in, "uses", "expireTime", "newSessionExpireTime", "bidiGenerateContentSetup", "fieldMask"); msg != "" {
		googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", msg))
		return
	}
	for _, name := range []string{"expireTime", "newSessionExpireTime"} {
		if raw, ok := in[name]; ok {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", name+" must be a timestamp string")
				return
			}
			t, err := time.Parse(time.RFC3339, s)
			if err != nil || !t.After(f.now().Add(-time.Minute)) || t.After(f.now().Add(20*time.Hour)) {
				googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", name+" must be an RFC 3339 time in the next 20 hours")
				return
			}
		}
	}
	if raw, ok := in["uses"]; ok {
		var uses int
		if json.Unmarshal(raw, &uses) != nil || uses < 0 {
			googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "uses must be a non-negative integer")
			return
		}
	}
	if raw, ok := in["bidiGenerateContentSetup"]; ok {
		if msg := checkSetup(raw); msg != "" {
			googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", msg)
			return
		}
	}
	name := "auth_tokens/" + random(32)
	f.mu.Lock()
	if f.setups == nil {
		f.setups = map[string]json.RawMessage{}
	}
	f.setups[name] = in["bidiGenerateContentSetup"]
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"name": name})
}

// checkSetup checks a token request's bidiGenerateContentSetup as the
// real API's field validation does: it is the setup itself (what
// @google/genai posts), so a "setup" wrapper is an unknown field. It
// returns the error message, or "".
func checkSetup(raw json.RawMessage) string {
	var setup map[string]json.RawMessage
	if err := json.Unmarshal(raw, &setup); err != nil || setup == nil {
		return "bidiGenerateContentSetup must be an object"
	}
	if msg := unknownKeys(setup, "model", "generationConfig", "systemInstruction", "tools", "realtimeInputConfig",
		"sessionResumption", "contextWindowCompression", "inputAudioTranscription", "outputAudioTranscription", "proactivity"); msg != "" {
		return fmt.Sprintf("Invalid JSON payload received. Unknown name %q at 'bidi_generate_content_setup': Cannot find field.", msg)
	}
	var model string
	json.Unmarshal(setup["model"], &model)
	if !strings.HasPrefix(model, "models/") {
		return "bidiGenerateContentSetup.model must be of the form models/{model}"
	}
	return ""
}

func unknownKeys(m map[string]json.RawMessage, known ...string) string {
	for k := range m {
		found := false
		for _, n := range known {
			found = found || k == n
		}
		if !found {
			return k
		}
	}
	return ""
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func openAIError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": code, "param": nil}})
}

func googleError(w http.ResponseWriter, status int, st, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = base62[int(b[i])%len(base62)]
	}
	return string(b)
}
