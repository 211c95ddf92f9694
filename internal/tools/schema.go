package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL names the one document each compile sees.
const schemaURL = "urn:agentline:tool-parameters.json"

// noLoader refuses every $ref outside the schema itself: the library's
// default loader would read local files, and fetching URLs would let a
// schema reach the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("references outside the schema are not allowed (%s)", url)
}

// compileSchema compiles a tool's parameters schema. It must be a JSON
// object whose type is "object", as both realtime providers require.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON Schema object")
	}
	if obj["type"] != "object" {
		return nil, errors.New(`must have "type": "object" (the arguments of a call are an object)`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, errors.New(cleanSchemaError(err))
	}
	return s, nil
}

func mustCompileSchema(raw json.RawMessage) *jsonschema.Schema {
	s, err := compileSchema(raw)
	if err != nil {
		panic(err)
	}
	return s
}

// decodeArguments parses the call's arguments, which must be a JSON object
// (empty means {}). Numbers stay json.Number, as the validator wants them.
func decodeArguments(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	args, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, &toolError{Code: "invalid_arguments", Message: "arguments must be a JSON object"}
	}
	return args, nil
}

// validateArguments checks decoded arguments against the schema.
func validateArguments(s *jsonschema.Schema, args map[string]any) error {
	if err := s.Validate(args); err != nil {
		return &toolError{Code: "invalid_arguments", Message: "arguments do not match the tool's parameters: " + cleanSchemaError(err)}
	}
	return nil
}

// cleanSchemaError flattens the library's multi-line message and drops the
// internal document name.
func cleanSchemaError(err error) string {
	msg := strings.ReplaceAll(err.Error(), schemaURL, "parameters")
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "-"))
	}
	return strings.Join(strings.Fields(strings.Join(lines, "; ")), " ")
}
