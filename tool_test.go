package agentline

import (
	"encoding/json"
	"testing"
)

func TestProviderToolRenderings(t *testing.T) {
	defs := []ToolDefinition{
		{Name: "search_knowledge_base", Description: "Search", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
		{Name: "lookup_order", Description: "Find an order", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
	tests := []struct {
		name string
		got  any
		want string
	}{
		{"openai", OpenAITools(defs), `[` +
			`{"type":"function","name":"search_knowledge_base","description":"Search","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}},` +
			`{"type":"function","name":"lookup_order","description":"Find an order","parameters":{"type":"object","properties":{}}}]`},
		{"gemini", GeminiTools(defs), `[{"functionDeclarations":[` +
			`{"name":"search_knowledge_base","description":"Search","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}},` +
			`{"name":"lookup_order","description":"Find an order","parameters":{"type":"object","properties":{}}}]}]`},
		{"openai without tools", OpenAITools(nil), `[]`},
		{"gemini without tools", GeminiTools(nil), `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.got)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Fatalf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}
