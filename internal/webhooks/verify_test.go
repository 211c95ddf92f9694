package webhooks_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentline/agentline/internal/webhooks"
)

// nodeVerifier runs the official Node library (standardwebhooks 1.1.1,
// installed into .cache/node by .ci/run) on one delivery.
const nodeVerifier = `
const { Webhook } = require(process.argv[1]);
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const { secret, headers, body } = JSON.parse(input);
  try { new Webhook(secret).verify(body, headers); console.log("ok"); }
  catch (e) { console.log("rejected: " + e.message); }
});
`

// nodeModule is the path of the installed standardwebhooks package, or ""
// with the test skipped (failed with AGENTLINE_REQUIRE_NODE=1).
func nodeModule(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs("../../.cache/node/node_modules/standardwebhooks")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "package.json"))
	if nodeErr == nil && modErr == nil {
		return dir
	}
	if os.Getenv("AGENTLINE_REQUIRE_NODE") == "1" {
		t.Fatalf("node and the standardwebhooks package are required (AGENTLINE_REQUIRE_NODE=1): %v %v", nodeErr, modErr)
	}
	t.Skipf("node or standardwebhooks missing (run .ci/run to install): %v %v", nodeErr, modErr)
	return ""
}

// verifyNode asks the Node library whether the delivery verifies.
func verifyNode(t *testing.T, module, secret string, h http.Header, body []byte) error {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"secret": secret, "body": string(body), "headers": map[string]string{
		"webhook-id": h.Get("webhook-id"), "webhook-timestamp": h.Get("webhook-timestamp"), "webhook-signature": h.Get("webhook-signature"),
	}})
	cmd := exec.Command("node", "-e", nodeVerifier, module)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	if s := strings.TrimSpace(string(out)); s != "ok" {
		return &verifyError{s}
	}
	return nil
}

type verifyError struct{ s string }

func (e *verifyError) Error() string { return e.s }

// verifyGo asks the official Go library.
func verifyGo(t *testing.T, secret string, h http.Header, body []byte) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(body, h)
}

// Sign's headers verify with both official libraries; a tampered body, the
// wrong secret and a timestamp older than their 5 minutes do not; with two
// secrets (a rotation's overlap), a receiver holding either one verifies.
func TestSignatureWithOfficialVerifiers(t *testing.T) {
	module := nodeModule(t)
	oldSecret, _ := webhooks.NewSecret()
	newSecret, _ := webhooks.NewSecret()
	body := []byte(`{"type":"webhook.test","timestamp":"2026-01-02T03:04:05Z","data":{"message":"hi"}}`)
	sign := func(at time.Time, secrets ...string) http.Header {
		h := http.Header{}
		if err := webhooks.Sign(h, secrets, "msg_abc", at, body); err != nil {
			t.Fatal(err)
		}
		return h
	}
	now := sign(time.Now(), newSecret)
	old := sign(time.Now().Add(-10*time.Minute), newSecret)
	both := sign(time.Now(), newSecret, oldSecret)
	if n := len(strings.Fields(both.Get("webhook-signature"))); n != 2 {
		t.Fatalf("%d signatures in %q", n, both.Get("webhook-signature"))
	}
	tampered := bytes.Replace(body, []byte("hi"), []byte("ho"), 1)
	cases := []struct {
		name   string
		secret string
		h      http.Header
		body   []byte
		ok     bool
	}{
		{"signed", newSecret, now, body, true},
		{"tampered body", newSecret, now, tampered, false},
		{"wrong secret", oldSecret, now, body, false},
		{"timestamp 10 minutes old", newSecret, old, body, false},
		{"rotation: new secret", newSecret, both, body, true},
		{"rotation: old secret", oldSecret, both, body, true},
	}
	for _, c := range cases {
		for name, verify := range map[string]func() error{
			"go":   func() error { return verifyGo(t, c.secret, c.h, c.body) },
			"node": func() error { return verifyNode(t, module, c.secret, c.h, c.body) },
		} {
			if err := verify(); (err == nil) != c.ok {
				t.Errorf("%s, %s verifier: err = %v, want ok=%v", c.name, name, err, c.ok)
			}
		}
	}
}
