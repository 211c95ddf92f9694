package agentline_test

import (
	"encoding/json"
	"testing"

	"github.com/agentline/agentline"
)

func TestToolRenderings(t *testing.T) {
	defs := []agentline.ToolDefinition{
		{Name: "search_kb", Description: "Search the knowledge base.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
		{Name: "hang_up", Description: "End the call.", Parameters: json.RawMessage(`{"type":"object"}`)},
	}
	openai, _ := json.Marshal(agentline.OpenAITools(defs))
	want := `[{"type":"function","name":"search_kb","description":"Search the knowledge base.","parameters":{"type":"object","properties":{"query":{"type":"string"}}}},` +
		`{"type":"function","name":"hang_up","description":"End the call.","parameters":{"type":"object"}}]`
	if string(openai) != want {
		t.Errorf("OpenAI tools:\n got %s\nwant %s", openai, want)
	}
	gemini, _ := json.Marshal(agentline.GeminiTools(defs))
	want = `[{"functionDeclarations":[{"name":"search_kb","description":"Search the knowledge base.","parameters":{"type":"object","properties":{"query":{"type":"string"}}}},` +
		`{"name":"hang_up","description":"End the call.","parameters":{"type":"object"}}]}]`
	if string(gemini) != want {
		t.Errorf("Gemini tools:\n got %s\nwant %s", gemini, want)
	}
	if got := agentline.GeminiTools(nil); got != nil {
		t.Errorf("no tools = %v, want nil (no tools key in the setup)", got)
	}
	if got, _ := json.Marshal(agentline.OpenAITools(nil)); string(got) != "[]" {
		t.Errorf("no OpenAI tools = %s, want []", got)
	}
}
