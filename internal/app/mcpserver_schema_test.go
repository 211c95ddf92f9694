package app_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// mcpOperations is the management API operation each MCP tool stands for,
// written out here so that the server's own table is checked against it.
var mcpOperations = map[string]string{
	"list_agents":              "GET /api/projects/{project_id}/agents",
	"get_agent":                "GET /api/agents/{agent_id}",
	"create_agent":             "POST /api/projects/{project_id}/agents",
	"update_agent":             "PATCH /api/agents/{agent_id}",
	"list_tools":               "GET /api/agents/{agent_id}/tools",
	"list_knowledge_documents": "GET /api/agents/{agent_id}/knowledge",
	"list_channels":            "GET /api/projects/{project_id}/channels",
	"create_channel":           "POST /api/projects/{project_id}/channels",
	"create_channel_key":       "POST /api/channels/{channel_id}/key",
	"get_channel_snippets":     "GET /api/channels/{channel_id}/snippets",
	"list_conversations":       "GET /api/projects/{project_id}/conversations",
	"get_conversation":         "GET /api/conversations/{conversation_id}",
	"list_test_scenarios":      "GET /api/agents/{agent_id}/scenarios",
	"create_test_scenario":     "POST /api/agents/{agent_id}/scenarios",
	"start_test_run":           "POST /api/agents/{agent_id}/test-runs",
	"list_test_runs":           "GET /api/agents/{agent_id}/test-runs",
	"get_test_run":             "GET /api/test-runs/{run_id}",
}

// openAPIDoc is docs/openapi.yaml with every local $ref inlined, as JSON
// values (numbers float64), so that it compares with what a client reads.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(agentline.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var inline func(v any) any
	inline = func(v any) any {
		switch n := v.(type) {
		case map[string]any:
			out := map[string]any{}
			if ref, ok := n["$ref"].(string); ok {
				var target any = doc
				for _, k := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					target = target.(map[string]any)[k]
				}
				maps.Copy(out, inline(target).(map[string]any))
			}
			for k, x := range n {
				if k != "$ref" {
					out[k] = inline(x)
				}
			}
			return out
		case []any:
			out := make([]any, len(n))
			for i, x := range n {
				out[i] = inline(x)
			}
			return out
		}
		return v
	}
	b, err := json.Marshal(inline(doc))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// requestSchema is what an operation of the API document takes: its
// parameters but project_id (the key's), and its JSON body's properties and
// required list (the parts of an allOf together).
func requestSchema(t *testing.T, doc map[string]any, operation string) (props map[string]any, required []string) {
	t.Helper()
	method, path, _ := strings.Cut(operation, " ")
	item := doc["paths"].(map[string]any)[path].(map[string]any)
	op := item[strings.ToLower(method)].(map[string]any)
	props = map[string]any{}
	params, _ := item["parameters"].([]any)
	opParams, _ := op["parameters"].([]any)
	for _, raw := range slices.Concat(params, opParams) {
		p := raw.(map[string]any)
		if p["name"] == "project_id" {
			continue
		}
		schema := maps.Clone(p["schema"].(map[string]any))
		if d, ok := p["description"]; ok && schema["description"] == nil {
			schema["description"] = d
		}
		props[p["name"].(string)] = schema
		if p["in"] == "path" {
			required = append(required, p["name"].(string))
		}
	}
	body, _ := op["requestBody"].(map[string]any)
	content, _ := body["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	schema, _ := media["schema"].(map[string]any)
	parts := []any{schema}
	if all, ok := schema["allOf"].([]any); ok {
		parts = all
	}
	for _, part := range parts {
		part, _ := part.(map[string]any)
		if bp, ok := part["properties"].(map[string]any); ok {
			maps.Copy(props, bp)
		}
		for _, r := range asAnySlice(part["required"]) {
			required = append(required, r.(string))
		}
	}
	return props, required
}

// Each tool's input schema, as the official Go SDK's client lists it, is
// its operation's request in docs/openapi.yaml (the document /api/openapi.yaml
// serves): the same properties with the same schemas, the same required
// fields, nothing else. A parameter's property carries the parameter's
// description when its schema has none.
func TestMCPToolSchemasAreTheAPIRequests(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	cs, err := mcpConnect(t, s, newKey(t, s, tok, p.ID, agentline.RoleViewer).Key)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := openAPIDoc(t)
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
		operation, ok := mcpOperations[tool.Name]
		if !ok {
			t.Errorf("tool %s stands for no operation of mcpOperations", tool.Name)
			continue
		}
		want, required := requestSchema(t, doc, operation)
		got := tool.InputSchema.(map[string]any)
		if got["type"] != "object" || got["additionalProperties"] != false {
			t.Errorf("%s: schema %v is not a closed object", tool.Name, got)
		}
		if stray := strayKeywords(got, false); len(stray) > 0 {
			t.Errorf("%s: schema keywords %q: a description with a comma unquoted in a YAML flow mapping?", tool.Name, stray)
		}
		gotProps := got["properties"].(map[string]any)
		if !slices.Equal(slices.Sorted(maps.Keys(gotProps)), slices.Sorted(maps.Keys(want))) {
			t.Errorf("%s: properties %v, %s takes %v", tool.Name, slices.Sorted(maps.Keys(gotProps)), operation, slices.Sorted(maps.Keys(want)))
		}
		for name, w := range want {
			if g := gotProps[name]; !reflect.DeepEqual(g, w) {
				gb, _ := json.Marshal(g)
				wb, _ := json.Marshal(w)
				t.Errorf("%s: property %s is %s, %s takes %s", tool.Name, name, gb, operation, wb)
			}
		}
		var gotRequired []string
		for _, r := range asAnySlice(got["required"]) {
			gotRequired = append(gotRequired, r.(string))
		}
		slices.Sort(gotRequired)
		slices.Sort(required)
		if !slices.Equal(gotRequired, slices.Compact(required)) {
			t.Errorf("%s: required %v, %s requires %v", tool.Name, gotRequired, operation, required)
		}
	}
	slices.Sort(names)
	if want := slices.Sorted(maps.Keys(mcpOperations)); !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func asAnySlice(v any) []any {
	l, _ := v.([]any)
	return l
}

// Every property of a tool's input schema is a field its handler decodes:
// sent alone (null) before a field nobody knows, it passes the handler's
// strict decoding, which then stops at the unknown one. So the openapi
// document the schemas come from cannot name a field the API would refuse.
func TestMCPToolPropertiesAreDecodedByTheAPI(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	var ch agentline.Channel
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "voice_widget", "name": "Site", "agent_id": a.ID}, &ch)
	cs, err := mcpConnect(t, s, newKey(t, s, tok, p.ID, agentline.RoleOwner).Key)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]any{"agent_id": a.ID, "channel_id": ch.ID}
	probed := 0
	for _, tool := range listed.Tools {
		method, path, _ := strings.Cut(mcpOperations[tool.Name], " ")
		if method == "GET" {
			continue
		}
		for name := range tool.InputSchema.(map[string]any)["properties"].(map[string]any) {
			if strings.Contains(path, "{"+name+"}") {
				continue
			}
			args := map[string]any{name: nil, "zzz_probe": 1}
			for param, v := range ids {
				if strings.Contains(path, "{"+param+"}") {
					args[param] = v
				}
			}
			probed++
			refusedCall(t, cs, tool.Name, args, agentline.EInvalid, `unknown field "zzz_probe"`)
		}
	}
	if probed < 20 {
		t.Fatalf("only %d properties probed", probed)
	}
	t.Logf("%d properties probed", probed)
}

// strayKeywords lists the keys of schema objects in v that no JSON Schema
// keyword looks like (words with spaces), skipping the names of
// properties.
func strayKeywords(v any, names bool) []string {
	var out []string
	switch n := v.(type) {
	case map[string]any:
		for k, x := range n {
			if !names && strings.ContainsAny(k, " ,()") {
				out = append(out, k)
			}
			out = append(out, strayKeywords(x, !names && (k == "properties" || k == "$defs"))...)
		}
	case []any:
		for _, x := range n {
			out = append(out, strayKeywords(x, false)...)
		}
	}
	return out
}
