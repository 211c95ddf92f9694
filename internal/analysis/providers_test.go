package analysis_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/analysis"
)

// The answer schema asks for what the settings want, strict in OpenAI's
// sense down through data_schema's nested objects and array items.
func TestAnswerSchema(t *testing.T) {
	s, err := analysis.AnswerSchema(agentline.AnalysisSettings{Summary: true})
	if err != nil || !slices.Equal(s["required"].([]string), []string{"summary"}) || s["additionalProperties"] != false {
		t.Fatalf("summary only: %v %v", s, err)
	}
	s, err = analysis.AnswerSchema(agentline.AnalysisSettings{SuccessCriteria: "booked", DataSchema: json.RawMessage(
		`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}}}}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := s["required"].([]string); !slices.Equal(got, []string{"data", "success", "success_reason"}) {
		t.Fatalf("required %v", got)
	}
	item := s["properties"].(map[string]any)["data"].(map[string]any)["properties"].(map[string]any)["items"].(map[string]any)["items"].(map[string]any)
	if item["additionalProperties"] != false || !slices.Equal(item["required"].([]string), []string{"sku"}) {
		t.Fatalf("nested item not strict: %v", item)
	}
	if _, err := analysis.AnswerSchema(agentline.AnalysisSettings{}); err == nil {
		t.Fatal("an empty analysis has a schema")
	}
}

// The clients tell answers a retry may fix (5xx, 429, refusals, incomplete
// or blocked answers) from permanent failures (other 4xx).
func TestProviderFailures(t *testing.T) {
	answer := ""
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(answer))
	}))
	defer srv.Close()
	req := analysis.Request{Instructions: "x", Transcript: "y", Schema: map[string]any{"type": "object"}}
	openai := &analysis.OpenAI{BaseURL: srv.URL, APIKey: "k", ModelName: "m", HTTP: srv.Client()}
	gemini := &analysis.Gemini{BaseURL: srv.URL, APIKey: "k", ModelName: "m", HTTP: srv.Client()}
	for _, c := range []struct {
		name      string
		client    analysis.Analyst
		status    int
		body      string
		permanent bool
		want      string
	}{
		{"openai refusal", openai, 200, `{"status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"no"}]}]}`, false, "refused"},
		{"openai incomplete", openai, 200, `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`, false, "max_output_tokens"},
		{"openai no text", openai, 200, `{"status":"completed","output":[{"type":"reasoning"}]}`, false, "no output_text"},
		{"openai 401", openai, 401, `{"error":{"message":"Incorrect API key provided"}}`, true, "Incorrect API key"},
		{"openai 500", openai, 500, `{"error":{"message":"boom"}}`, false, "500"},
		{"openai 429", openai, 429, `{"error":{"message":"slow down"}}`, false, "slow down"},
		{"gemini blocked", gemini, 200, `{"promptFeedback":{"blockReason":"SAFETY"}}`, false, "SAFETY"},
		{"gemini empty", gemini, 200, `{"candidates":[{"content":{"parts":[]},"finishReason":"MAX_TOKENS"}]}`, false, "MAX_TOKENS"},
		{"gemini 404", gemini, 404, `{"error":{"message":"models/m is not found"}}`, true, "not found"},
		{"gemini 503", gemini, 503, `overloaded`, false, "overloaded"},
	} {
		status, answer = c.status, c.body
		_, err := c.client.Analyze(context.Background(), req)
		var perm *analysis.PermanentError
		if err == nil || errors.As(err, &perm) != c.permanent || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (permanent %t)", c.name, err, errors.As(err, &perm))
		}
	}
	status, answer = 200, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{\"a\":"},{"text":"1}"}]},"finishReason":"STOP"}]}`
	if text, err := gemini.Analyze(context.Background(), req); err != nil || text != `{"a":1}` {
		t.Fatalf("gemini parts: %q %v", text, err)
	}
}
