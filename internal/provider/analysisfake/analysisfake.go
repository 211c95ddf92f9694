// Package analysisfake is an in-process stand-in for the providers' text
// APIs that conversation analysis uses: OpenAI's Responses API (POST
// /v1/responses, Structured Outputs through text.format) and Gemini's
// generateContent (POST /v1beta/models/{model}:generateContent with
// generationConfig.responseMimeType and responseJsonSchema; free text
// without them, as a test scenario's simulated person asks). Like the real
// services it checks the key header and the request's shape, answers
// errors in their {"error": {...}} format, and answers JSON that matches
// the schema it was sent. Knobs make it fail, or hold its answers. Serve it
// with httptest.NewServer and point OPENAI_BASE_URL / GEMINI_BASE_URL at it.
package analysisfake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentline/agentline/internal/analysis"
)

// Request is one request the fake received.
type Request struct {
	Path string
	Body json.RawMessage
	// Answered is set once the fake wrote a 200 answer to it.
	Answered bool
}

// Fake serves both APIs.
type Fake struct {
	openAIKey, geminiKey string

	mu       sync.Mutex
	requests []Request
	failN    int // the next failN requests fail with failWith
	failWith int
	hold     chan struct{} // open: requests wait until Release closes it
	answer   func(schema map[string]any, input string) any
	say      func(instructions, input string) string
}

// Say sets the free-text answer of a request with no answer format (a
// test scenario's simulated person): by default, analysis.EndMarker.
func (f *Fake) Say(fn func(instructions, input string) string) {
	f.mu.Lock()
	f.say = fn
	f.mu.Unlock()
}

// freeText is the free-text answer to instructions and input.
func (f *Fake) freeText(instructions, input string) string {
	f.mu.Lock()
	say := f.say
	f.mu.Unlock()
	if say == nil {
		return analysis.EndMarker
	}
	return say(instructions, input)
}

// Hold makes the requests that arrive from now on wait, unanswered, until
// Release (or until their client goes away): a provider that is slow for
// as long as a test needs, such as while it kills an instance mid-request.
func (f *Fake) Hold() {
	f.mu.Lock()
	if f.hold == nil {
		f.hold = make(chan struct{})
	}
	f.mu.Unlock()
}

// Release lets the held requests, and the ones after, be answered.
func (f *Fake) Release() {
	f.mu.Lock()
	if f.hold != nil {
		close(f.hold)
		f.hold = nil
	}
	f.mu.Unlock()
}

// New returns a fake that accepts these API keys.
func New(openAIKey, geminiKey string) *Fake { return &Fake{openAIKey: openAIKey, geminiKey: geminiKey} }

// Fail makes the next n requests fail with status (n < 0: every request,
// until Fail(0, 0)).
func (f *Fake) Fail(n, status int) {
	f.mu.Lock()
	f.failN, f.failWith = n, status
	f.mu.Unlock()
}

// Answer replaces the answer's JSON document (default: Sample).
func (f *Fake) Answer(fn func(schema map[string]any, input string) any) {
	f.mu.Lock()
	f.answer = fn
	f.mu.Unlock()
}

// Requests returns what the fake received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// Sample is the default answer: the schema's zero values, a summary naming
// the user's first line, success true, and "fake" in every string field of
// data.
func Sample(schema map[string]any, input string) any {
	doc := analysis.ZeroValue(schema).(map[string]any)
	first := ""
	for _, line := range strings.Split(input, "\n") {
		if _, rest, ok := strings.Cut(line, "] User: "); ok {
			first = rest
			break
		}
	}
	if _, ok := doc["summary"]; ok {
		doc["summary"] = "The user asked: " + first
	}
	if _, ok := doc["success"]; ok {
		doc["success"], doc["success_reason"] = true, "The fake says so."
	}
	if data, ok := doc["data"].(map[string]any); ok {
		for k, v := range data {
			if _, ok := v.(string); ok {
				data[k] = "fake"
			}
		}
	}
	return doc
}

// ServeHTTP routes to the two endpoints.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	f.mu.Lock()
	i := len(f.requests)
	f.requests = append(f.requests, Request{Path: r.URL.Path, Body: body})
	fail, answer, hold := 0, f.answer, f.hold
	if f.failN != 0 {
		fail = f.failWith
		if f.failN > 0 {
			f.failN--
		}
	}
	f.mu.Unlock()
	if answer == nil {
		answer = Sample
	}
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if fail != 0 {
		writeError(w, fail, "the fake provider is failing on purpose")
		return
	}
	var ok bool
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		ok = f.responses(w, r, body, answer)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/") && strings.HasSuffix(r.URL.Path, ":generateContent"):
		ok = f.generateContent(w, r, body, answer)
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	}
	if ok {
		f.mu.Lock()
		f.requests[i].Answered = true
		f.mu.Unlock()
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "code": status}})
}

func writeJSON(w http.ResponseWriter, v any) bool {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v) == nil
}

// responses answers POST /v1/responses like the Responses API: a response
// object whose output holds one assistant message with an output_text part.
func (f *Fake) responses(w http.ResponseWriter, r *http.Request, body []byte, answer func(map[string]any, string) any) bool {
	if r.Header.Get("Authorization") != "Bearer "+f.openAIKey {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided.")
		return false
	}
	var req struct {
		Model        string `json:"model"`
		Instructions string `json:"instructions"`
		Input        string `json:"input"`
		Text         *struct {
			Format struct {
				Type   string         `json:"type"`
				Name   string         `json:"name"`
				Schema map[string]any `json:"schema"`
				Strict bool           `json:"strict"`
			} `json:"format"`
		} `json:"text"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Model == "" || req.Input == "" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid request: model and input are required (%v)", err))
		return false
	}
	if req.Text == nil { // free text
		return writeResponse(w, req.Model, req.Input, f.freeText(req.Instructions, req.Input))
	}
	if ft := req.Text.Format; ft.Type != "json_schema" || ft.Name == "" || ft.Schema == nil || !ft.Strict {
		writeError(w, http.StatusBadRequest, "text.format must be a strict json_schema with a name and a schema")
		return false
	}
	if err := strictCheck(req.Text.Format.Schema); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid schema for response_format '"+req.Text.Format.Name+"': "+err.Error())
		return false
	}
	text, _ := json.Marshal(answer(req.Text.Format.Schema, req.Input))
	return writeResponse(w, req.Model, req.Input, string(text))
}

// writeResponse answers a response object whose output holds one
// assistant message with an output_text part.
func writeResponse(w http.ResponseWriter, model, input, text string) bool {
	return writeJSON(w, map[string]any{
		"id": "resp_fake", "object": "response", "created_at": time.Now().Unix(), "status": "completed", "model": model,
		"output": []any{map[string]any{"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}},
		"usage": map[string]any{"input_tokens": len(input) / 4, "output_tokens": len(text) / 4, "total_tokens": (len(input) + len(text)) / 4},
	})
}

// strictCheck enforces what OpenAI's strict mode demands of a schema's
// objects: additionalProperties false and every property required.
func strictCheck(s map[string]any) error {
	props, ok := s["properties"].(map[string]any)
	if ok {
		if s["additionalProperties"] != false {
			return fmt.Errorf("'additionalProperties' is required to be supplied and to be false")
		}
		req, _ := s["required"].([]any)
		if len(req) != len(props) {
			return fmt.Errorf("'required' is required to be supplied and to be an array including every key in properties")
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				if err := strictCheck(m); err != nil {
					return err
				}
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		return strictCheck(items)
	}
	return nil
}

// generateContent answers POST /v1beta/models/{model}:generateContent like
// the Gemini API: one candidate whose content's one part is the JSON text,
// or, for a request with no answer format, Say's free text.
func (f *Fake) generateContent(w http.ResponseWriter, r *http.Request, body []byte, answer func(map[string]any, string) any) bool {
	if r.Header.Get("x-goog-api-key") != f.geminiKey {
		writeError(w, http.StatusBadRequest, "API key not valid. Please pass a valid API key.")
		return false
	}
	var req struct {
		SystemInstruction struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
		GenerationConfig struct {
			ResponseMimeType   string         `json:"responseMimeType"`
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
			ResponseSchema     map[string]any `json:"responseSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Contents) == 0 || len(req.Contents[0].Parts) == 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("* GenerateContentRequest.contents: contents is not specified (%v)", err))
		return false
	}
	gc := req.GenerationConfig
	if gc.ResponseJSONSchema != nil && gc.ResponseSchema != nil {
		writeError(w, http.StatusBadRequest, "responseJsonSchema and responseSchema cannot both be set")
		return false
	}
	schema := gc.ResponseJSONSchema
	if schema == nil {
		schema = gc.ResponseSchema
	}
	input := req.Contents[0].Parts[0].Text
	var text string
	switch {
	case gc.ResponseMimeType == "" && schema == nil: // free text: a simulated person's turn
		var instructions strings.Builder
		for _, p := range req.SystemInstruction.Parts {
			instructions.WriteString(p.Text)
		}
		text = f.freeText(instructions.String(), input)
	case gc.ResponseMimeType != "application/json" || schema == nil:
		writeError(w, http.StatusBadRequest, "generationConfig needs responseMimeType application/json and a response schema")
		return false
	default:
		b, _ := json.Marshal(answer(schema, input))
		text = string(b)
	}
	return writeJSON(w, map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
		"modelVersion":  strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":generateContent"),
	})
}

// Wait blocks until the fake has received n requests or ctx ends.
func (f *Fake) Wait(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		got := len(f.requests)
		f.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the fake got %d requests, want %d: %w", got, n, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
