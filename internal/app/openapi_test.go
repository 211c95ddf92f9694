package app_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// openAPIMethods are the operation keys of an OpenAPI path item.
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// documented lists "METHOD /path" for every operation of docs/openapi.yaml.
func documented(t *testing.T, doc map[string]any) []string {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		t.Fatal("docs/openapi.yaml has no paths")
	}
	var out []string
	for path, item := range paths {
		ops, ok := item.(map[string]any)
		if !ok {
			t.Fatalf("path %s is not an object", path)
		}
		for key := range ops {
			if slices.Contains(openAPIMethods, key) {
				out = append(out, strings.ToUpper(key)+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// docs/openapi.yaml and the registered routes list the same operations,
// with the same {param} names as the ServeMux patterns.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := yaml.Unmarshal(agentline.OpenAPI(), &doc); err != nil {
		t.Fatalf("docs/openapi.yaml is not YAML: %v", err)
	}
	a, err := newApp(t, apptest.Config(t, storetest.URL(t, store.SQLite), nil))
	if err != nil {
		t.Fatal(err)
	}
	routes, docs := a.Routes(), documented(t, doc)
	for i, r := range routes {
		// ServeMux's {$} (the path ends here) is not part of the URL.
		routes[i] = strings.TrimSuffix(r, "{$}")
	}
	for _, r := range routes {
		if !slices.Contains(docs, r) {
			t.Errorf("route %s is missing from docs/openapi.yaml", r)
		}
	}
	for _, d := range docs {
		if !slices.Contains(routes, d) {
			t.Errorf("docs/openapi.yaml lists %s, which is not a registered route", d)
		}
	}
	checkRefs(t, doc, doc, "")
}

// checkRefs fails for every local $ref that points at nothing.
func checkRefs(t *testing.T, root, node any, at string) {
	t.Helper()
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if ref, ok := v.(string); ok && k == "$ref" {
				if !resolves(root, ref) {
					t.Errorf("%s: $ref %s points at nothing", at, ref)
				}
				continue
			}
			checkRefs(t, root, v, at+"/"+k)
		}
	case []any:
		for _, v := range n {
			checkRefs(t, root, v, at)
		}
	}
}

func resolves(root any, ref string) bool {
	if !strings.HasPrefix(ref, "#/") {
		return false
	}
	node := root
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := node.(map[string]any)
		if !ok {
			return false
		}
		if node, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

func TestOpenAPIIsServed(t *testing.T) {
	t.Parallel()
	s := startSQLite(t)
	r := s.Must(t, 200, "GET", "/api/openapi.yaml", "", nil, nil)
	if !bytes.Equal(r.Body, agentline.OpenAPI()) || r.Header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("served %d bytes as %q", len(r.Body), r.Header.Get("Content-Type"))
	}
}
