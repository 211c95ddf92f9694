package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

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

// A sign-in under way is taken once, on any connection; expired ones are
// pruned, live ones kept.
func TestOIDCSignInsUnderWay(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		if err := db.CreateOIDCSignIn(ctx, "state-a", "binding-a", now.Add(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateOIDCSignIn(ctx, "state-old", "binding-old", now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		binding, expires, err := db.TakeOIDCSignIn(ctx, "state-a")
		if err != nil || binding != "binding-a" || expires.Sub(now.Add(10*time.Minute)).Abs() > time.Second {
			t.Fatalf("take: %q %v %v", binding, expires, err)
		}
		if _, _, err := db.TakeOIDCSignIn(ctx, "state-a"); code(err) != "not_found" {
			t.Fatalf("taken twice: %v", err)
		}
		if err := db.CreateOIDCSignIn(ctx, "state-b", "binding-b", now.Add(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if n, err := db.PruneOIDCSignIns(ctx, now); err != nil || n != 1 {
			t.Fatalf("prune: %d %v", n, err)
		}
		if _, _, err := db.TakeOIDCSignIn(ctx, "state-old"); code(err) != "not_found" {
			t.Errorf("a pruned sign-in: %v", err)
		}
		if _, _, err := db.TakeOIDCSignIn(ctx, "state-b"); err != nil {
			t.Errorf("a live sign-in was pruned: %v", err)
		}
	})
}

// Two callbacks of one state at once, as two instances would take them:
// exactly one gets the sign-in.
func TestOIDCSignInTakenOnce(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for i := range 5 {
			state := fmt.Sprintf("state-%d", i)
			if err := db.CreateOIDCSignIn(ctx, state, "binding", time.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 2)
			for range 2 {
				go func() {
					_, _, err := db.TakeOIDCSignIn(ctx, state)
					errs <- err
				}()
			}
			won, lost := 0, 0
			for range 2 {
				switch err := <-errs; code(err) {
				case "":
					won++
				case "not_found":
					lost++
				default:
					t.Fatalf("take: %v", err)
				}
			}
			if won != 1 || lost != 1 {
				t.Fatalf("%s: %d took it, %d did not", state, won, lost)
			}
		}
	})
}
