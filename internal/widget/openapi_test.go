package widget_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/widget"
)

// Every route of this package is described in docs/openapi.yaml: its path
// under paths (indented two spaces) with its method (indented four).
func TestRoutesAreInOpenAPI(t *testing.T) {
	ops := map[string]bool{}
	path := ""
	for _, line := range strings.Split(string(agentline.OpenAPI()), "\n") {
		switch {
		case strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":"):
			path = strings.TrimSuffix(strings.TrimSpace(line), ":")
		case strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     ") && path != "":
			ops[strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(line), ":"))+" "+path] = true
		case line != "" && !strings.HasPrefix(line, "  "):
			path = ""
		}
	}
	routes := widget.New(widget.Options{Store: &countingStore{}}).Routes()
	for _, r := range routes {
		if !ops[r.Method+" "+r.Pattern] {
			t.Errorf("%s %s is not in docs/openapi.yaml", r.Method, r.Pattern)
		}
	}
	if len(routes) != 23 {
		t.Errorf("%d routes; update this test and the docs", len(routes))
	}
}
