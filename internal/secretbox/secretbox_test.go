package secretbox

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func TestSealOpenRotate(t *testing.T) {
	old, err := New([][]byte{testKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal("sk-secret", "provider_accounts/1/openai")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "sk-secret") || !strings.HasPrefix(sealed, "v1:"+KeyID(testKey(1))+":") {
		t.Fatalf("sealed %q", sealed)
	}
	if again, _ := old.Seal("sk-secret", "provider_accounts/1/openai"); again == sealed {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	if _, err := old.Open(sealed, "provider_accounts/2/openai"); err == nil {
		t.Error("a value opened under another row's context")
	}
	rotated, _ := New([][]byte{testKey(2), testKey(1)})
	if got, err := rotated.Open(sealed, "provider_accounts/1/openai"); err != nil || got != "sk-secret" {
		t.Fatalf("open with the old key second: %q %v", got, err)
	}
	resealed, changed, err := rotated.Reseal(sealed, "provider_accounts/1/openai")
	if err != nil || !changed || !strings.HasPrefix(resealed, "v1:"+KeyID(testKey(2))+":") {
		t.Fatalf("reseal: %q %v %v", resealed, changed, err)
	}
	if same, changed, err := rotated.Reseal(resealed, "provider_accounts/1/openai"); err != nil || changed || same != resealed {
		t.Errorf("a second reseal changed the value: %v %v", changed, err)
	}
	newOnly, _ := New([][]byte{testKey(2)})
	if got, err := newOnly.Open(resealed, "provider_accounts/1/openai"); err != nil || got != "sk-secret" {
		t.Errorf("after removing the old key: %q %v", got, err)
	}
	_, err = newOnly.Open(sealed, "provider_accounts/1/openai")
	if err == nil || !strings.Contains(err.Error(), KeyID(testKey(1))) || !strings.Contains(err.Error(), "does not list") {
		t.Errorf("a value of a removed key: %v", err)
	}
	var none *Box
	if _, err := none.Seal("x", "c"); err != ErrNoKey {
		t.Errorf("nil box seals: %v", err)
	}
}

func TestSettleDevelopmentKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "encryption.key")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	first, err := Settle(Settings{KeyFile: path, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	second, err := Settle(Settings{KeyFile: path, Logger: log})
	if err != nil || second.SealingKeyID() != first.SealingKeyID() {
		t.Fatalf("the next start made another key: %v", err)
	}
	if n := strings.Count(logs.String(), "made a development encryption key"); n != 1 {
		t.Errorf("logged the new key %d times:\n%s", n, logs.String())
	}
	prod, err := Settle(Settings{Production: true, KeyFile: path, Logger: log})
	if err != nil || prod != nil {
		t.Errorf("production without a key: %v %v", prod, err)
	}
	if !strings.Contains(logs.String(), "AGENTLINE_ENCRYPTION_KEY is not set: projects cannot save") {
		t.Errorf("production start does not say so:\n%s", logs.String())
	}
	if _, err := Settle(Settings{Keys: "short"}); err == nil {
		t.Error("a bad key list settled")
	}
}
