package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// nodeModules is the directory .ci/run installs the tests' npm packages
// into (AGENTLINE_NODE_MODULES overrides it). Without it the test is
// skipped, unless AGENTLINE_REQUIRE_NODE=1 (as in CI) makes that a failure.
func nodeModules(t *testing.T, want string) string {
	t.Helper()
	dir := os.Getenv("AGENTLINE_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join("..", ".cache", "node", "node_modules")
	}
	dir, _ = filepath.Abs(dir)
	if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_NODE") == "1" {
			t.Fatalf("AGENTLINE_REQUIRE_NODE=1 but %s: %v (.ci/run installs it)", want, err)
		}
		t.Skipf("no %s in %s (.ci/run installs it); AGENTLINE_REQUIRE_NODE=1 makes this a failure", want, dir)
	}
	return dir
}

// exampleScript is the module script of docs/sdk.md's custom client.
var exampleScript = regexp.MustCompile(`(?s)<script type="module">\n(.*?)</script>`)

// The SDK's declarations type-check the docs' example with tsc --strict.
func TestSDKDeclarations(t *testing.T) {
	nm := nodeModules(t, filepath.Join(".bin", "tsc"))
	doc, err := os.ReadFile(filepath.Join("..", "docs", "sdk.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := exampleScript.FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/sdk.md has no <script type=\"module\"> example")
	}
	src := strings.Replace(string(m[1]), `"https://agentline.example.com/sdk/client.js"`, `"@agentline/client"`, 1)
	dir := t.TempDir()
	sdk, _ := filepath.Abs(filepath.Join("..", "sdk", "js", "index.d.ts"))
	tsconfig := `{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "module": "esnext",
  "moduleResolution": "bundler", "lib": ["es2022", "dom", "dom.iterable"], "types": [], "skipLibCheck": false,
  "paths": {"@agentline/client": [` + quote(sdk) + `]}}, "files": ["example.ts"]}`
	for name, body := range map[string]string{"example.ts": src, "tsconfig.json": tsconfig} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(nm, ".bin", "tsc"), "--noEmit", "--strict", "-p", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc --noEmit --strict on the docs' example: %v\n%s\n%s", err, out, src)
	}
	// And a misuse fails, so the check above means something.
	bad := src + "\nclient.startSession({ agentId: true });\n"
	os.WriteFile(filepath.Join(dir, "example.ts"), []byte(bad), 0o644)
	if out, err := exec.Command(filepath.Join(nm, ".bin", "tsc"), "--noEmit", "--strict", "-p", dir).CombinedOutput(); err == nil {
		t.Fatalf("tsc accepted agentId: true\n%s", out)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// The docs' complete custom client (the html block of docs/sdk.md: page,
// button, transcript, session) stays under 40 lines: the SDK promises a
// custom client in a screenful of code.
func TestSDKExampleIsShort(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "sdk.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```html\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/sdk.md has no html example")
	}
	lines := strings.Count(string(m[1]), "\n")
	t.Logf("docs/sdk.md custom client: %d lines", lines)
	if lines >= 40 || !strings.Contains(string(m[1]), "createClient") || !strings.Contains(string(m[1]), `on("transcript"`) {
		t.Errorf("docs/sdk.md custom client is %d lines (want < 40, with createClient and a transcript listener)", lines)
	}
}
