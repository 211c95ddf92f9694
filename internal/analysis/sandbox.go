package analysis

import (
	"context"
	"encoding/json"
	"strings"
)

// SandboxModel is the model name stored with the sandbox's analyses.
const SandboxModel = "sandbox"

// Sandbox is the pretend analyst of the sandbox (AGENTLINE_SANDBOX with
// no provider key): it answers at once and deterministically, so the whole
// analysis path works with no key. The summary quotes the first two things
// the user said; success is true (with a reason saying it was not judged);
// every data field gets the zero value of its type.
type Sandbox struct{}

// Model names the sandbox.
func (Sandbox) Model() string { return SandboxModel }

// Analyze answers from the transcript's lines and the schema; a test
// scenario's turns and verdicts by the rules of sandboxScenario.
func (Sandbox) Analyze(_ context.Context, r Request) (string, error) {
	if r.Scenario != nil {
		return sandboxScenario(r)
	}
	var said []string
	for _, l := range r.Lines {
		if l.Speaker == "user" && strings.TrimSpace(l.Text) != "" && len(said) < 2 {
			said = append(said, strings.TrimSpace(l.Text))
		}
	}
	answer := ZeroValue(r.Schema).(map[string]any)
	props, _ := r.Schema["properties"].(map[string]any)
	if _, ok := props["summary"]; ok {
		answer["summary"] = truncateRunes("The user said: "+strings.Join(said, " / "), 300)
	}
	if _, ok := props["success"]; ok {
		answer["success"] = true
		answer["success_reason"] = "The sandbox does not judge conversations: it always answers true."
	}
	b, err := json.Marshal(answer)
	return string(b), err
}

// ZeroValue is a value of the JSON Schema s in which every property is
// there with the zero value of its type (the first of an enum, the
// smallest allowed number): "" for strings, 0 for numbers, false, [] and
// objects of zero values, null when no type is given.
func ZeroValue(s any) any {
	m, _ := s.(map[string]any)
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ := m["type"]
	if list, ok := typ.([]any); ok && len(list) > 0 {
		typ = list[0]
	}
	switch typ {
	case "string":
		return ""
	case "number", "integer":
		if min, ok := m["minimum"].(float64); ok {
			return min
		}
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for k, p := range props {
			out[k] = ZeroValue(p)
		}
		return out
	}
	return nil
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
