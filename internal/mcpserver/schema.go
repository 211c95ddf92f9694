package mcpserver

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/agentline/agentline"
)

// operation is what a tool's input is made of: the API operation's path
// and query parameters and its JSON body, and the one object schema of
// them all that the tool publishes.
type operation struct {
	pathParams, queryParams []string
	body                    bool // the operation takes a JSON body
	schema                  map[string]any
}

// apiDoc is the management API's OpenAPI document, parsed: the one
// description of every request, which the tools' input schemas are taken
// from, so that a tool asks for exactly what its request takes.
type apiDoc map[string]any

// ownDoc is agentline's own document, parsed once in a process: the tests
// start hundreds of servers in a few processes, where parsing its 200 KB
// of YAML at each start was 3.7 % of the CPU. Nothing writes to a parsed
// document: resolve copies what it takes.
var ownDoc = sync.OnceValues(func() (apiDoc, error) { return parseDoc(agentline.OpenAPI()) })

func parseDoc(b []byte) (apiDoc, error) {
	// Into a plain map: yaml would make every nested map an apiDoc too.
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return apiDoc(m), nil
}

// operation describes method on path, leaving out the parameters named
// in implicit (the key's project): the parameters are properties (path
// parameters required), the JSON body's properties join them, and
// references are inlined, since a tool's schema stands alone.
func (d apiDoc) operation(method, path string, implicit ...string) (operation, error) {
	item, _ := d.at("paths", path).(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return operation{}, fmt.Errorf("openapi document has no %s %s", method, path)
	}
	var o operation
	props, required := map[string]any{}, []string{}
	params, _ := item["parameters"].([]any)
	opParams, _ := op["parameters"].([]any)
	for _, raw := range slices.Concat(params, opParams) {
		p, err := d.resolveMap(raw)
		if err != nil {
			return o, err
		}
		name, _ := p["name"].(string)
		if slices.Contains(implicit, name) {
			continue
		}
		schema, _ := p["schema"].(map[string]any)
		schema = maps.Clone(schema)
		if desc, ok := p["description"]; ok && schema["description"] == nil {
			schema["description"] = desc
		}
		props[name] = schema
		if p["in"] == "path" {
			o.pathParams = append(o.pathParams, name)
			required = append(required, name)
		} else if p["in"] == "query" {
			o.queryParams = append(o.queryParams, name)
		}
	}
	schema := map[string]any{"type": "object", "additionalProperties": false}
	if raw := d.jsonBody(op); raw != nil {
		body, err := d.resolveMap(raw)
		if err != nil {
			return o, err
		}
		if body, err = flatten(body); err != nil {
			return o, fmt.Errorf("%s %s: %w", method, path, err)
		}
		bodyProps, _ := body["properties"].(map[string]any)
		for name, p := range bodyProps {
			if _, taken := props[name]; taken {
				return o, fmt.Errorf("%s %s: body property %s is also a parameter", method, path, name)
			}
			props[name] = p
		}
		for _, r := range asList(body["required"]) {
			if name, ok := r.(string); ok {
				required = append(required, name)
			}
		}
		if desc, ok := body["description"]; ok {
			schema["description"] = desc
		}
		o.body = true
	}
	schema["properties"] = props
	if len(required) > 0 {
		schema["required"] = required
	}
	o.schema = schema
	return o, nil
}

// jsonBody is the schema of op's JSON request body, or nil.
func (d apiDoc) jsonBody(op map[string]any) any {
	body, _ := op["requestBody"].(map[string]any)
	content, _ := body["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	if media == nil {
		return nil
	}
	return media["schema"]
}

// at walks the document by keys.
func (d apiDoc) at(keys ...string) any {
	var node any = map[string]any(d)
	for _, k := range keys {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[k]
	}
	return node
}

func (d apiDoc) resolveMap(v any) (map[string]any, error) {
	r, err := d.resolve(v, 0)
	if err != nil {
		return nil, err
	}
	m, ok := r.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("openapi document: %v is not an object", v)
	}
	return m, nil
}

// resolve copies v with every local $ref replaced by what it points at
// (keywords beside a $ref are kept over the target's).
func (d apiDoc) resolve(v any, depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("openapi document: references nest too deep")
	}
	switch n := v.(type) {
	case map[string]any:
		out := map[string]any{}
		if ref, ok := n["$ref"].(string); ok {
			target := d.at(strings.Split(strings.TrimPrefix(ref, "#/"), "/")...)
			if !strings.HasPrefix(ref, "#/") || target == nil {
				return nil, fmt.Errorf("openapi document: $ref %s points at nothing", ref)
			}
			t, err := d.resolve(target, depth+1)
			if err != nil {
				return nil, err
			}
			m, ok := t.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("openapi document: $ref %s is not an object", ref)
			}
			maps.Copy(out, m)
		}
		for k, x := range n {
			if k == "$ref" {
				continue
			}
			r, err := d.resolve(x, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(n))
		for i, x := range n {
			r, err := d.resolve(x, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// flatten merges a body schema's allOf parts (an input schema and a list
// of what creation requires) into one object schema, since a tool's
// properties are listed at the top of its schema.
func flatten(s map[string]any) (map[string]any, error) {
	parts := asList(s["allOf"])
	if parts == nil {
		return s, nil
	}
	out := maps.Clone(s)
	delete(out, "allOf")
	props := map[string]any{}
	var required []any
	for _, raw := range parts {
		p, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("allOf part %v is not an object", raw)
		}
		p, err := flatten(p)
		if err != nil {
			return nil, err
		}
		maps.Copy(props, asMap(p["properties"]))
		required = append(required, asList(p["required"])...)
		for k, v := range p {
			if k != "properties" && k != "required" && out[k] == nil {
				out[k] = v
			}
		}
	}
	out["properties"], out["required"] = props, required
	return out, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
