package analysis

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// Gemini asks a Gemini-compatible provider through generateContent,
// POST {GEMINI_BASE_URL}/v1beta/models/{model}:generateContent, with the
// API key in the x-goog-api-key header.
//
// Shapes per Google's structured output guide
// (https://ai.google.dev/gemini-api/docs/structured-output) and the
// generateContent reference: generationConfig.responseMimeType
// "application/json" with responseJsonSchema (a JSON Schema; the older
// responseSchema takes Google's OpenAPI subset instead), the system prompt
// in systemInstruction.parts, the transcript as one user content; the
// answer's JSON is the text of candidates[0].content.parts. The
// GenerationConfig reference (as generated into Google's client libraries)
// says of responseJsonSchema: "If set, response_schema must be omitted, but
// response_mime_type is required", and lists the keywords it supports,
// among them type, enum, items, properties, additionalProperties and
// required: all the strict answer schema uses.
type Gemini struct {
	BaseURL, APIKey, ModelName string
	HTTP                       *http.Client
}

type geminiPart struct {
	Text string `json:"text"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	SystemInstruction geminiContent   `json:"systemInstruction"`
	Contents          []geminiContent `json:"contents"`
	// GenerationConfig is nil for a free-text answer (a simulated
	// person's turn).
	GenerationConfig *geminiConfig `json:"generationConfig,omitempty"`
}

type geminiConfig struct {
	ResponseMimeType   string         `json:"responseMimeType"`
	ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
}

type geminiResponse struct {
	Candidates []struct {
		Content      geminiContent `json:"content"`
		FinishReason string        `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
}

// Model names the model that answers.
func (g *Gemini) Model() string { return g.ModelName }

// Analyze asks for the analysis and returns the answer's JSON text.
func (g *Gemini) Analyze(ctx context.Context, r Request) (string, error) {
	var body geminiRequest
	body.SystemInstruction = geminiContent{Parts: []geminiPart{{Text: r.Instructions}}}
	body.Contents = []geminiContent{{Role: "user", Parts: []geminiPart{{Text: r.Transcript}}}}
	if r.Schema != nil {
		body.GenerationConfig = &geminiConfig{ResponseMimeType: "application/json", ResponseJSONSchema: r.Schema}
	}
	u := strings.TrimSuffix(g.BaseURL, "/") + "/v1beta/models/" + url.PathEscape(g.ModelName) + ":generateContent"
	var out geminiResponse
	if err := post(ctx, g.HTTP, "the Gemini-compatible provider", u, http.Header{"x-goog-api-key": {g.APIKey}}, body, &out); err != nil {
		return "", err
	}
	if out.PromptFeedback != nil && out.PromptFeedback.BlockReason != "" {
		return "", invalidAnswer("the prompt was blocked: %s", out.PromptFeedback.BlockReason)
	}
	if len(out.Candidates) == 0 {
		return "", invalidAnswer("no candidates in the response")
	}
	c := out.Candidates[0]
	var text strings.Builder
	for _, p := range c.Content.Parts {
		text.WriteString(p.Text)
	}
	if text.Len() == 0 {
		return "", invalidAnswer("an empty candidate (finishReason %s)", c.FinishReason)
	}
	return text.String(), nil
}
