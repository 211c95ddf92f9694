package provideraccount

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/secretbox"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// Save checks the key and the base URL before anything is stored, and
// Credentials answers the project's own account, or the deployment's.
func TestSaveAndResolve(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t, store.SQLite)
	u, _ := db.CreateUser(ctx, "ann@example.com", "x")
	p, _ := db.CreateProject(ctx, agentline.Project{Name: "p"}, u.ID)
	fake := httptest.NewServer(providerfake.New("sk-good-key-123456", "gm-good-key-123456"))
	defer fake.Close()
	box, _ := secretbox.New([][]byte{bytes.Repeat([]byte{3}, 32)})
	deployment := agentline.ProviderCredentials{BaseURL: "https://api.openai.example", APIKey: "sk-deploy"}
	newAccounts := func(o Options) *Accounts {
		o.Store = db
		o.Deployment = map[agentline.Provider]agentline.ProviderCredentials{agentline.ProviderOpenAI: deployment}
		return New(o)
	}
	a := newAccounts(Options{Sealer: box, AllowPrivate: true})
	for _, tc := range []struct {
		name, kind, key, base string
		code, want            string
	}{
		{"empty key", "openai", "", fake.URL, agentline.EInvalid, "api_key must be"},
		{"key with a space", "openai", "sk good", fake.URL, agentline.EInvalid, "api_key must be"},
		{"query", "openai", "sk-good-key-123456", fake.URL + "?x=1", agentline.EInvalid, "query"},
		{"not a URL", "openai", "sk-good-key-123456", "ftp://x", agentline.EInvalid, "http(s) URL"},
		{"refused", "openai", "sk-bad-key-0000000", fake.URL, agentline.EInvalid, "refused the key (status 401: Incorrect API key provided"},
		{"refused gemini", "gemini", "gm-bad-key-0000000", fake.URL, agentline.EInvalid, "refused the key (status 400: API key not valid"},
		{"no gemini default", "gemini", "gm-good-key-123456", "", agentline.EInvalid, "base_url is required"},
	} {
		_, err := a.Save(ctx, p.ID, agentline.Provider(tc.kind), tc.key, tc.base)
		if agentline.ErrorCode(err) != tc.code || !strings.Contains(agentline.ErrorMessage(err), tc.want) {
			t.Errorf("%s: %v, want %s with %q", tc.name, err, tc.code, tc.want)
		}
		if len(tc.key) > 10 && err != nil && strings.Contains(err.Error(), tc.key[:10]) {
			t.Errorf("%s: the error shows the key: %v", tc.name, err)
		}
	}
	// The outgoing address policy: loopback only when allowed; https only
	// in production; no key stored without an encryption key.
	strict := newAccounts(Options{Sealer: box})
	if _, err := strict.Save(ctx, p.ID, agentline.ProviderOpenAI, "sk-good-key-123456", fake.URL); agentline.ErrorCode(err) != agentline.EInvalid ||
		!strings.Contains(err.Error(), "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS") {
		t.Errorf("loopback base_url: %v", err)
	}
	prod := newAccounts(Options{Sealer: box, Production: true, AllowPrivate: true})
	if _, err := prod.Save(ctx, p.ID, agentline.ProviderOpenAI, "sk-good-key-123456", fake.URL); !strings.Contains(agentline.ErrorMessage(err), "https") {
		t.Errorf("http in production: %v", err)
	}
	var noKey *secretbox.Box
	if _, err := newAccounts(Options{Sealer: noKey, AllowPrivate: true}).Save(ctx, p.ID, agentline.ProviderOpenAI, "sk-good-key-123456", fake.URL); agentline.ErrorCode(err) != agentline.ENotConfigured ||
		!strings.Contains(err.Error(), "AGENTLINE_ENCRYPTION_KEY") {
		t.Errorf("no encryption key: %v", err)
	}
	if list, _ := db.ProviderAccounts(ctx, p.ID); len(list) != 0 {
		t.Fatalf("a refused save stored %+v", list)
	}

	if c, err := a.Credentials(ctx, p.ID, agentline.ProviderOpenAI); err != nil || c != deployment {
		t.Fatalf("without an account: %v %v", c, err)
	}
	acc, err := a.Save(ctx, p.ID, agentline.ProviderOpenAI, " sk-good-key-123456 ", fake.URL+"/")
	if err != nil || acc.KeyLast4 != "3456" || acc.BaseURL != fake.URL {
		t.Fatalf("save: %+v %v", acc, err)
	}
	c, err := a.Credentials(ctx, p.ID, agentline.ProviderOpenAI)
	if err != nil || c.APIKey != "sk-good-key-123456" || c.BaseURL != fake.URL || !c.Project {
		t.Fatalf("own account: %v %v", c, err)
	}
	if s := c.String(); strings.Contains(s, "sk-good") {
		t.Errorf("credentials print their key: %s", s)
	}
	// Another instance (its own cache) sees a removal within CacheFor.
	other := newAccounts(Options{Sealer: box, CacheFor: time.Minute})
	other.Credentials(ctx, p.ID, agentline.ProviderOpenAI)
	if err := db.DeleteProviderAccount(ctx, p.ID, agentline.ProviderOpenAI); err != nil {
		t.Fatal(err)
	}
	if c, _ := other.Credentials(ctx, p.ID, agentline.ProviderOpenAI); !c.Project {
		t.Error("the cache was not used")
	}
	other.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if c, _ := other.Credentials(ctx, p.ID, agentline.ProviderOpenAI); c != deployment {
		t.Errorf("after CacheFor: %v", c)
	}
	// A key sealed under a key no longer listed: a clear error, no key.
	a.Save(ctx, p.ID, agentline.ProviderOpenAI, "sk-good-key-123456", fake.URL)
	rotated, _ := secretbox.New([][]byte{bytes.Repeat([]byte{4}, 32)})
	_, err = newAccounts(Options{Sealer: rotated}).Credentials(ctx, p.ID, agentline.ProviderOpenAI)
	if agentline.ErrorCode(err) != agentline.ENotConfigured || !strings.Contains(err.Error(), "does not open") {
		t.Errorf("wrong key list: %v", err)
	}
}

// What a call or session start pays for its project's credentials: a
// cache hit, and a miss (one SQLite read and one AES-GCM open).
func BenchmarkCredentials(b *testing.B) {
	ctx := context.Background()
	db := storetest.Open(b, store.SQLite)
	u, _ := db.CreateUser(ctx, "ann@example.com", "x")
	p, _ := db.CreateProject(ctx, agentline.Project{Name: "p"}, u.ID)
	box, _ := secretbox.New([][]byte{bytes.Repeat([]byte{3}, 32)})
	sealed, _ := box.Seal("sk-bench-key-123456", agentline.ProviderKeyContext(p.ID, agentline.ProviderOpenAI))
	if _, err := db.SaveProviderAccount(ctx, agentline.ProviderAccount{ProjectID: p.ID, Kind: agentline.ProviderOpenAI,
		BaseURL: "https://api.example", SealedKey: sealed, KeyLast4: "3456"}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		cacheFor time.Duration
	}{{"cached", time.Hour}, {"uncached", time.Nanosecond}} {
		b.Run(tc.name, func(b *testing.B) {
			a := New(Options{Store: db, Sealer: box, CacheFor: tc.cacheFor})
			for b.Loop() {
				if _, err := a.Credentials(ctx, p.ID, agentline.ProviderOpenAI); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
