package webhooks_test

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/webhooks"
)

// codeBlock returns the first fenced block of language lang after marker
// in the page.
func codeBlock(t *testing.T, page, marker, lang string) string {
	t.Helper()
	i := strings.Index(page, marker)
	if i < 0 {
		t.Fatalf("docs/webhooks.md has no %q", marker)
	}
	rest := page[i:]
	start := strings.Index(rest, "```"+lang+"\n")
	if start < 0 {
		t.Fatalf("no %s block after %q", lang, marker)
	}
	rest = rest[start+len("```"+lang+"\n"):]
	return rest[:strings.Index(rest, "```")]
}

// The Node receiver of docs/webhooks.md, run as printed (its port and the
// path of the installed package aside), answers 204 to a signed delivery
// and 401 to a tampered one; it is at most 15 lines.
func TestDocsNodeReceiver(t *testing.T) {
	module := nodeModule(t)
	page, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	src := codeBlock(t, string(page), "Node, with `standardwebhooks`", "js")
	if n := strings.Count(src, "\n"); n > 15 {
		t.Errorf("the Node receiver is %d lines", n)
	}
	for _, r := range []struct{ from, to string }{
		{`require("standardwebhooks")`, `require(` + js(module) + `)`},
		{`.listen(8000)`, `.listen(0, "127.0.0.1", function () { console.log(this.address().port); })`},
	} {
		if !strings.Contains(src, r.from) {
			t.Fatalf("the Node receiver has no %s", r.from)
		}
		src = strings.Replace(src, r.from, r.to, 1)
	}
	file := filepath.Join(t.TempDir(), "receiver.js")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	secret, err := webhooks.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", file)
	cmd.Env = append(os.Environ(), "AGENTLINE_WEBHOOK_SECRET="+secret)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	port, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the receiver did not start: %v", err)
	}
	url := "http://127.0.0.1:" + strings.TrimSpace(port) + "/"
	body := []byte(`{"type":"webhook.test","timestamp":"2026-11-24T12:00:00Z","data":{"webhook_id":1,"message":"hello"}}`)
	post := func(b []byte) int {
		req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
		if err := webhooks.Sign(req.Header, []string{secret}, "msg_docs", time.Now(), body); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(body); got != http.StatusNoContent {
		t.Errorf("a signed delivery: %d, want 204", got)
	}
	if got := post(bytes.Replace(body, []byte("hello"), []byte("hellO"), 1)); got != http.StatusUnauthorized {
		t.Errorf("a tampered delivery: %d, want 401", got)
	}
}

// js quotes a string for JavaScript.
func js(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
