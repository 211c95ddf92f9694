package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/secretbox"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// rotate-encryption reseals every provider key under the first key of the
// list; run again it changes nothing; after it the old key can go; a bad
// list stops it with a message that names the key, never its value. The
// key is nowhere in the SQLite file's bytes.
func TestRotateEncryption(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			url := storetest.URL(t, d)
			oldKey, newKey := bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{9}, 32)
			b64 := base64.StdEncoding.EncodeToString
			db, err := openMigrated(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			u, err := db.CreateUser(ctx, "ann@example.com", "x")
			if err != nil {
				t.Fatal(err)
			}
			p, _ := db.CreateProject(ctx, agentline.Project{Name: "p"}, u.ID)
			old, _ := secretbox.New([][]byte{oldKey})
			const secret = "sk-rotate-me-please-9Z9Z"
			sealed, _ := old.Seal(secret, agentline.ProviderKeyContext(p.ID, agentline.ProviderOpenAI))
			if _, err := db.SaveProviderAccount(ctx, agentline.ProviderAccount{ProjectID: p.ID, Kind: agentline.ProviderOpenAI,
				BaseURL: "https://api.example", SealedKey: sealed, KeyLast4: "9Z9Z"}); err != nil {
				t.Fatal(err)
			}
			db.Close()

			env := map[string]string{"AGENTLINE_DATABASE_URL": url, "AGENTLINE_ENCRYPTION_KEY": b64(newKey) + "," + b64(oldKey)}
			out, err := runCmd(t, env, "rotate-encryption")
			if err != nil || !strings.Contains(out, "resealed 1 secret(s) under key "+secretbox.KeyID(newKey)) {
				t.Fatalf("rotate = %q %v", out, err)
			}
			if out, err := runCmd(t, env, "rotate-encryption"); err != nil || !strings.Contains(out, "resealed 0 secret(s)") {
				t.Fatalf("second rotate = %q %v", out, err)
			}
			env["AGENTLINE_ENCRYPTION_KEY"] = b64(newKey)
			if out, err := runCmd(t, env, "rotate-encryption"); err != nil || !strings.Contains(out, "resealed 0") {
				t.Fatalf("rotate with the new key alone = %q %v", out, err)
			}
			db, err = store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			a, err := db.ProviderAccount(ctx, p.ID, agentline.ProviderOpenAI)
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			newOnly, _ := secretbox.New([][]byte{newKey})
			if got, err := newOnly.Open(a.SealedKey, agentline.ProviderKeyContext(p.ID, agentline.ProviderOpenAI)); err != nil || got != secret {
				t.Fatalf("after rotation with the old key gone: %q %v", got, err)
			}

			env["AGENTLINE_ENCRYPTION_KEY"] = b64(oldKey)
			_, err = runCmd(t, env, "rotate-encryption")
			if err == nil || !strings.Contains(err.Error(), secretbox.KeyID(newKey)) || !strings.Contains(err.Error(), "does not list") {
				t.Fatalf("rotate without the key that sealed: %v", err)
			}
			for _, bad := range []string{"not-base64!", b64(make([]byte, 16)), b64(newKey) + ",short"} {
				env["AGENTLINE_ENCRYPTION_KEY"] = bad
				_, err := runCmd(t, env, "rotate-encryption")
				if err == nil || !strings.Contains(err.Error(), "AGENTLINE_ENCRYPTION_KEY") || strings.Contains(err.Error(), bad) {
					t.Errorf("bad list %q: %v", bad, err)
				}
				if _, err := runCmd(t, env, "migrate"); err == nil || !strings.Contains(err.Error(), "AGENTLINE_ENCRYPTION_KEY") {
					t.Errorf("bad list %q does not stop a start: %v", bad, err)
				}
			}
			if d == store.SQLite {
				path := strings.TrimPrefix(url, "sqlite:")
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				wal, _ := os.ReadFile(path + "-wal") // absent after a clean close
				raw = append(raw, wal...)
				if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("sk-rotate")) {
					t.Fatal("the key is in the database file in clear")
				}
			}
		})
	}
}
