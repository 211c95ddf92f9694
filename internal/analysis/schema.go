package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentline/agentline"
)

// SchemaName names the answer's format in the provider request (OpenAI
// wants a-z, A-Z, 0-9, _ and -, at most 64 characters).
const SchemaName = "conversation_analysis"

// AnswerSchema is the JSON Schema of the answer the provider is asked for,
// built from the agent's settings: summary (a string) when a summary is
// wanted; success (a boolean) and success_reason (a string) when there are
// success criteria; data (the agent's data_schema) when there is one. The
// schema is strict in OpenAI's sense (every object lists all its
// properties as required and allows no others), which Structured Outputs
// requires with strict: true; data_schema is made strict the same way, so
// every field it names is asked for.
func AnswerSchema(s agentline.AnalysisSettings) (map[string]any, error) {
	props := map[string]any{}
	if s.Summary {
		props["summary"] = map[string]any{"type": "string", "description": "A short summary of the conversation: who wanted what, and how it ended."}
	}
	if s.SuccessCriteria != "" {
		props["success"] = map[string]any{"type": "boolean", "description": "Whether the agent met the success criteria."}
		props["success_reason"] = map[string]any{"type": "string", "description": "One sentence saying why."}
	}
	if len(s.DataSchema) > 0 {
		var data any
		if err := json.Unmarshal(s.DataSchema, &data); err != nil {
			return nil, fmt.Errorf("data_schema: %w", err)
		}
		props["data"] = strict(data)
	}
	if len(props) == 0 {
		return nil, errors.New("the agent asks for no analysis")
	}
	return map[string]any{"type": "object", "properties": props, "required": slices.Sorted(maps.Keys(props)),
		"additionalProperties": false}, nil
}

// strict returns a copy of the schema v in which every object schema
// requires all its properties and allows no others, recursively through
// properties and items.
func strict(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m)+2)
	maps.Copy(out, m)
	if props, ok := m["properties"].(map[string]any); ok {
		p := make(map[string]any, len(props))
		for k, sub := range props {
			p[k] = strict(sub)
		}
		out["properties"] = p
		out["required"] = slices.Sorted(maps.Keys(p))
		out["additionalProperties"] = false
	}
	if items, ok := m["items"]; ok {
		out["items"] = strict(items)
	}
	return out
}

// noLoader refuses every $ref outside the schema: the library's default
// loader would read local files.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("references outside the schema are not allowed (%s)", url)
}

// validator checks answers against an answer schema with
// github.com/santhosh-tekuri/jsonschema/v6 (draft 2020-12), the library
// the tool facility checks tool arguments with.
type validator struct{ schema *jsonschema.Schema }

func newValidator(schema map[string]any) (*validator, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "urn:agentline:analysis.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("analysis schema: %w", err)
	}
	return &validator{s}, nil
}

// answer is a provider's answer, decoded.
type answer struct {
	Summary       string          `json:"summary"`
	Success       *bool           `json:"success"`
	SuccessReason string          `json:"success_reason"`
	Data          json.RawMessage `json:"data"`
}

// check parses text as JSON and validates it against the schema.
func (v *validator) check(text string) (answer, error) {
	var a answer
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
	if err != nil {
		return a, invalidAnswer("not JSON: %v", err)
	}
	if err := v.schema.Validate(doc); err != nil {
		return a, invalidAnswer("does not match the schema: %v", err)
	}
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return a, invalidAnswer("%v", err)
	}
	return a, nil
}

// invalidAnswer is an answer that is not what was asked for: retried, as a
// model may well answer right the next time.
func invalidAnswer(format string, args ...any) error {
	return fmt.Errorf("the provider's answer is invalid: "+format, args...)
}
