package webhooks_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentline/agentline"
)

// Every event type of the catalog has its schema in docs/openapi.yaml's
// webhooks section (a POST whose body's type is that constant) and a row
// in docs/webhooks.md; the section documents no other; the endpoint
// schema's events enum is the catalog.
func TestCatalogIsDocumented(t *testing.T) {
	var doc struct {
		Webhooks map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Schema struct {
							AllOf []struct {
								Properties struct {
									Type struct {
										Const string `yaml:"const"`
									} `yaml:"type"`
								} `yaml:"properties"`
							} `yaml:"allOf"`
						} `yaml:"schema"`
					} `yaml:"content"`
				} `yaml:"requestBody"`
			} `yaml:"post"`
		} `yaml:"webhooks"`
	}
	if err := yaml.Unmarshal(agentline.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for name, w := range doc.Webhooks {
		listed = append(listed, name)
		consts := []string{}
		for _, part := range w.Post.RequestBody.Content["application/json"].Schema.AllOf {
			if c := part.Properties.Type.Const; c != "" {
				consts = append(consts, c)
			}
		}
		if !slices.Equal(consts, []string{name}) {
			t.Errorf("openapi webhooks.%s: the body's type constants are %v", name, consts)
		}
	}
	slices.Sort(listed)
	want := slices.Sorted(slices.Values(agentline.EventTypes()))
	if !slices.Equal(listed, want) {
		t.Errorf("openapi webhooks section lists %v, the catalog is %v", listed, want)
	}
	enum := "enum: ['*', " + strings.Join(agentline.EventTypes(), ", ") + "]"
	if !strings.Contains(string(agentline.OpenAPI()), enum) {
		t.Errorf("openapi has no events enum %s", enum)
	}
	page, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range agentline.EventTypes() {
		if !strings.Contains(string(page), "`"+typ+"`") {
			t.Errorf("docs/webhooks.md does not name %s", typ)
		}
	}
}
