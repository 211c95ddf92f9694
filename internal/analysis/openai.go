package analysis

import (
	"context"
	"net/http"
	"strings"
)

// OpenAI asks an OpenAI-compatible provider through the Responses API,
// POST {OPENAI_BASE_URL}/v1/responses, with Structured Outputs.
//
// The request and answer shapes follow OpenAI's API reference
// (https://platform.openai.com/docs/api-reference/responses/create and the
// Structured Outputs guide, checked against the generated OpenAPI models
// of openai-client-base, TextResponseFormatJsonSchema): the format is
// text.format = {type: "json_schema", name, schema, strict: true}; the
// answer's output is a list of items, the message items (type "message")
// hold content parts, and the JSON is the text of the parts of type
// "output_text" (a part of type "refusal" carries the model's refusal).
type OpenAI struct {
	BaseURL, APIKey, ModelName string
	HTTP                       *http.Client
}

type openAIFormat struct {
	Type   string         `json:"type"`
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
	Strict bool           `json:"strict"`
}

type openAIRequest struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions"`
	Input        string `json:"input"`
	// Text is nil for a free-text answer (a simulated person's turn).
	Text *openAIText `json:"text,omitempty"`
	// Store false: the transcript is not kept by the provider for later
	// retrieval through the API.
	Store bool `json:"store"`
}

type openAIText struct {
	Format openAIFormat `json:"format"`
}

type openAIResponse struct {
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
	} `json:"output"`
}

// Model names the model that answers.
func (o *OpenAI) Model() string { return o.ModelName }

// Analyze asks for the analysis and returns the answer's JSON text.
func (o *OpenAI) Analyze(ctx context.Context, r Request) (string, error) {
	var body openAIRequest
	body.Model, body.Instructions, body.Input = o.ModelName, r.Instructions, r.Transcript
	if r.Schema != nil {
		body.Text = &openAIText{Format: openAIFormat{Type: "json_schema", Name: SchemaName, Schema: r.Schema, Strict: true}}
	}
	header := http.Header{"Authorization": {"Bearer " + o.APIKey}}
	var out openAIResponse
	if err := post(ctx, o.HTTP, "the OpenAI-compatible provider", strings.TrimSuffix(o.BaseURL, "/")+"/v1/responses", header, body, &out); err != nil {
		return "", err
	}
	if out.Status != "" && out.Status != "completed" {
		reason := out.Status
		if out.IncompleteDetails != nil && out.IncompleteDetails.Reason != "" {
			reason += " (" + out.IncompleteDetails.Reason + ")"
		}
		return "", invalidAnswer("the response is %s", reason)
	}
	var text strings.Builder
	for _, item := range out.Output {
		if item.Type != "message" {
			continue
		}
		for _, part := range item.Content {
			switch part.Type {
			case "output_text":
				text.WriteString(part.Text)
			case "refusal":
				return "", invalidAnswer("the model refused: %s", part.Refusal)
			}
		}
	}
	if text.Len() == 0 {
		return "", invalidAnswer("no output_text in the response")
	}
	return text.String(), nil
}
