package store_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/secretbox"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Provider accounts by project: one per kind, replaced on save, another
// project's never visible, the key stored only sealed (a SELECT of the row
// does not show it), and rotation reseals every key once.
func TestProviderAccounts(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
		box, _ := secretbox.New([][]byte{oldKey})
		save := func(p int64, kind agentline.Provider, key, base string) agentline.ProviderAccount {
			t.Helper()
			sealed, err := box.Seal(key, agentline.ProviderKeyContext(p, kind))
			if err != nil {
				t.Fatal(err)
			}
			a, err := db.SaveProviderAccount(ctx, agentline.ProviderAccount{ProjectID: p, Kind: kind, BaseURL: base, SealedKey: sealed, KeyLast4: key[len(key)-4:]})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		save(f.p1.ID, agentline.ProviderOpenAI, "sk-first-key-1111", "https://one.example")
		save(f.p1.ID, agentline.ProviderOpenAI, "sk-project-one-secret-AAAA", "https://one.example/v")
		save(f.p1.ID, agentline.ProviderGemini, "gm-project-one-secret-BBBB", "https://gem.example")
		save(f.p2.ID, agentline.ProviderOpenAI, "sk-project-two-secret-CCCC", "https://two.example")
		list, err := db.ProviderAccounts(ctx, f.p1.ID)
		if err != nil || len(list) != 2 || list[0].Kind != agentline.ProviderGemini || list[1].BaseURL != "https://one.example/v" || list[1].KeyLast4 != "AAAA" {
			t.Fatalf("p1's accounts: %+v %v", list, err)
		}
		a, err := db.ProviderAccount(ctx, f.p2.ID, agentline.ProviderOpenAI)
		if err != nil || a.BaseURL != "https://two.example" || a.UpdatedAt.IsZero() {
			t.Fatalf("p2's openai: %+v %v", a, err)
		}
		if _, err := db.ProviderAccount(ctx, f.p2.ID, agentline.ProviderGemini); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("p2 has no gemini account: %v", err)
		}
		if key, err := box.Open(a.SealedKey, agentline.ProviderKeyContext(f.p2.ID, agentline.ProviderOpenAI)); err != nil || key != "sk-project-two-secret-CCCC" {
			t.Fatalf("open p2's key: %q %v", key, err)
		}
		if row := db.RawProviderAccountRow(ctx, t, f.p1.ID, "openai"); strings.Contains(row, "sk-project-one-secret") {
			t.Fatalf("the key is in the row in clear: %s", row)
		}
		if _, err := db.SaveProviderAccount(ctx, agentline.ProviderAccount{ProjectID: 99999, Kind: agentline.ProviderOpenAI, SealedKey: "x", KeyLast4: "x"}); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("an account of no project: %v", err)
		}

		rotated, _ := secretbox.New([][]byte{newKey, oldKey})
		if n, err := db.ResealSecrets(ctx, rotated.Reseal); err != nil || n != 3 {
			t.Fatalf("reseal: %d %v", n, err)
		}
		if n, err := db.ResealSecrets(ctx, rotated.Reseal); err != nil || n != 0 {
			t.Fatalf("second reseal: %d %v", n, err)
		}
		newOnly, _ := secretbox.New([][]byte{newKey})
		for _, p := range []int64{f.p1.ID, f.p2.ID} {
			accounts, _ := db.ProviderAccounts(ctx, p)
			for _, a := range accounts {
				if _, err := newOnly.Open(a.SealedKey, agentline.ProviderKeyContext(p, a.Kind)); err != nil {
					t.Errorf("after rotation, %s of %d: %v", a.Kind, p, err)
				}
			}
		}

		if err := db.DeleteProviderAccount(ctx, f.p2.ID, agentline.ProviderOpenAI); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteProviderAccount(ctx, f.p2.ID, agentline.ProviderOpenAI); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if list, _ := db.ProviderAccounts(ctx, f.p1.ID); len(list) != 2 {
			t.Fatalf("deleting p2's touched p1's: %+v", list)
		}
	})
}
