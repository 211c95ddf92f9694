package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Instances starting together on one empty PostgreSQL database all
// migrate without error: one applies the migrations, the others wait for
// it. (SQLite is the single-instance database and has no such lock.)
func TestConcurrentMigrate(t *testing.T) {
	for _, d := range []store.Dialect{store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			url := storetest.EmptyURL(t, d)
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 4 {
				wg.Go(func() {
					db, err := store.Open(ctx, url)
					if err != nil {
						errs <- err
						return
					}
					defer db.Close()
					errs <- db.Migrate(ctx)
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("migrate: %v", err)
				}
			}
			db, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			status, err := db.MigrationStatus(ctx)
			if err != nil || len(status) == 0 {
				t.Fatalf("status = %v %v", status, err)
			}
			for _, s := range status {
				if !strings.HasPrefix(s, "applied ") {
					t.Errorf("migration %s", s)
				}
			}
		})
	}
}
