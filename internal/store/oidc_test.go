package store_test

import (
	"context"
	"testing"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// An identity links to the account of its email once; afterwards it
// reaches that account whatever its email, and no other identity can
// claim it.
func TestOIDCSignIn(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const iss = "https://sso.example.com"
		ann := mustUser(t, db, "ann@example.com")
		u, created, err := db.OIDCSignIn(ctx, iss, "sub-ann", "Ann@example.com", true)
		if err != nil || created || u.ID != ann.ID {
			t.Fatalf("link: %+v %v %v", u, created, err)
		}
		if u, _, err = db.OIDCSignIn(ctx, iss, "sub-ann", "ann.new@example.com", true); err != nil || u.ID != ann.ID {
			t.Fatalf("changed email: %+v %v", u, err)
		}
		if _, _, err = db.OIDCSignIn(ctx, iss, "sub-other", "ann@example.com", true); code(err) != "conflict" {
			t.Fatalf("second identity: %v", err)
		}
		if _, _, err = db.OIDCSignIn(ctx, iss, "sub-bob", "bob@example.com", false); code(err) != "not_found" {
			t.Fatalf("no create: %v", err)
		}
		bob, created, err := db.OIDCSignIn(ctx, iss, "sub-bob", "bob@example.com", true)
		if err != nil || !created || bob.Email != "bob@example.com" {
			t.Fatalf("new: %+v %v %v", bob, created, err)
		}
		if _, hash, _ := db.UserByEmail(ctx, "bob@example.com"); hash != "" {
			t.Errorf("a new identity's account has a password hash %q", hash)
		}
	})
}
