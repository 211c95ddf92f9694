package app_test

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentline/agentline"
)

// Every list in docs/openapi.yaml pages one way: it takes limit and cursor
// and answers next_cursor, in its body or, for a bare array, in the
// X-Next-Cursor header. A list is a GET whose answer is a JSON array, or
// an object with an array named as the path's last segment (or items).
// A search that cannot page says so with x-unpaged.
func TestOpenAPIListsPageByCursor(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(agentline.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	lists := 0
	for path, item := range doc["paths"].(map[string]any) {
		op, ok := item.(map[string]any)["get"].(map[string]any)
		if !ok || op["x-unpaged"] != nil {
			continue
		}
		schema := deref(doc, dig(op, "responses", "200", "content", "application/json", "schema"))
		if schema == nil {
			continue
		}
		last := path[strings.LastIndex(path, "/")+1:]
		bare := schema["type"] == "array"
		props, _ := schema["properties"].(map[string]any)
		field := deref(doc, props[last])
		if field == nil {
			field = deref(doc, props["items"])
		}
		if field == nil {
			field = suffixArray(doc, props, last)
		}
		if !bare && (field == nil || field["type"] != "array") {
			continue
		}
		lists++
		params := map[string]bool{}
		for _, p := range op["parameters"].([]any) {
			p := deref(doc, p)
			params[p["name"].(string)] = true
		}
		if !params["limit"] || !params["cursor"] {
			t.Errorf("GET %s takes no limit and cursor: %v", path, params)
		}
		if bare {
			if dig(op, "responses", "200", "headers", "X-Next-Cursor") == nil {
				t.Errorf("GET %s answers a bare array without the X-Next-Cursor header", path)
			}
		} else if props["next_cursor"] == nil {
			t.Errorf("GET %s answers no next_cursor", path)
		}
	}
	if lists < 20 {
		t.Errorf("found %d lists, want every one of the 20", lists)
	}
}

// dig walks a YAML document by keys; nil when a key is missing.
func dig(node any, keys ...string) any {
	for _, k := range keys {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[k]
	}
	return node
}

// deref is node as an object, following a local $ref.
func deref(doc map[string]any, node any) map[string]any {
	m, _ := node.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		m, _ = dig(doc, strings.Split(strings.TrimPrefix(ref, "#/"), "/")...).(map[string]any)
	}
	return m
}

// suffixArray is the array property whose name ends the path's last
// segment (notify-attempts answers attempts), or nil.
func suffixArray(doc map[string]any, props map[string]any, last string) map[string]any {
	for name, p := range props {
		if f := deref(doc, p); f != nil && f["type"] == "array" && strings.HasSuffix(last, "-"+name) {
			return f
		}
	}
	return nil
}
