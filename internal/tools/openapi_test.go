package tools

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentline/agentline"
)

// Every route of this package is described in docs/openapi.yaml.
func TestRoutesAreInOpenAPI(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(agentline.OpenAPI(), &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	for _, r := range NewHandler(nil, nil, false).Routes() {
		if _, ok := doc.Paths[r.Pattern][strings.ToLower(r.Method)]; !ok {
			t.Errorf("%s %s is not in docs/openapi.yaml", r.Method, r.Pattern)
		}
	}
}
