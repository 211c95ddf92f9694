package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestUseStreamToken(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		soon := time.Now().Add(5 * time.Minute)
		if err := db.UseStreamToken(ctx, "CA1", soon); err != nil {
			t.Fatal(err)
		}
		if err := db.UseStreamToken(ctx, "CA1", soon); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("second use: %v, want conflict", err)
		}
		if err := db.UseStreamToken(ctx, "CA2", soon); err != nil {
			t.Fatalf("another token: %v", err)
		}
		// An expired token's row is swept, so its ref no longer blocks
		// (the token itself no longer verifies); the others stay.
		if err := db.UseStreamToken(ctx, "CA3", time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		if n, err := db.DeleteExpiredStreamTokens(ctx); err != nil || n != 1 {
			t.Fatalf("swept %d, %v; want 1", n, err)
		}
		if err := db.UseStreamToken(ctx, "CA1", soon); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("use after the sweep: %v, want conflict", err)
		}
		if err := db.UseStreamToken(ctx, "CA3", soon); err != nil {
			t.Fatalf("use after expiry: %v", err)
		}
		// Many uses at once: exactly one wins.
		var wg sync.WaitGroup
		wins := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wins <- db.UseStreamToken(ctx, "CA4", soon)
			}()
		}
		wg.Wait()
		close(wins)
		won := 0
		for err := range wins {
			switch {
			case err == nil:
				won++
			case agentline.ErrorCode(err) != agentline.EConflict:
				t.Fatalf("concurrent use: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d concurrent uses won, want 1", won)
		}
	})
}
