package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The console's modules type-check with tsc --strict (checkJs on their
// JSDoc types): console/tsconfig.json over console/*.js and pages/*.js with
// the DOM, and console/tsconfig.worklet.json over the call's worklet with
// the AudioWorkletGlobalScope's names (console/worklet.d.ts). Without
// .cache/node the test is skipped, unless AGENTLINE_REQUIRE_NODE=1.
func TestConsoleTypeChecks(t *testing.T) {
	nm := nodeModules(t, filepath.Join(".bin", "tsc"))
	tsc := filepath.Join(nm, ".bin", "tsc")
	for _, config := range []string{"tsconfig.json", "tsconfig.worklet.json"} {
		cmd := exec.Command(tsc, "-p", filepath.Join("console", config))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("tsc -p console/%s: %v\n%s", config, err, out)
		}
	}

	// Every module says so itself, for editors that open one file.
	modules, _ := filepath.Glob(filepath.Join("console", "*.js"))
	pages, _ := filepath.Glob(filepath.Join("console", "pages", "*.js"))
	for _, name := range append(modules, pages...) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(src), "// @ts-check\n") {
			t.Errorf("%s does not start with // @ts-check", name)
		}
	}

	// And a misuse fails, so the check above means something: a page that
	// passes an agent's name where the API wants its id.
	dir, _ := filepath.Abs("console")
	tmp := t.TempDir()
	bad := "// @ts-check\nimport { getAgent, listAgents } from " + quote(filepath.ToSlash(filepath.Join(dir, "api.js"))) +
		";\ngetAgent(1).then((a) => listAgents(a.name));\n"
	config := `{"extends": ` + quote(filepath.ToSlash(filepath.Join(dir, "tsconfig.json"))) + `, "include": ["bad.js"], "exclude": []}`
	for name, body := range map[string]string{"bad.js": bad, "tsconfig.json": config} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(tsc, "-p", tmp).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad.js") {
		t.Fatalf("tsc accepted listAgents(a.name): %v\n%s", err, out)
	}
}
