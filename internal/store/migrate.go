package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations holds the goose migrations, one folder per dialect.
//
//go:embed migrations
var migrations embed.FS

// Migrate applies every pending migration of this dialect.
func (db *DB) Migrate(ctx context.Context) error {
	p, err := db.migrator()
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	db.prepareHot(ctx)
	return nil
}

// MigrationStatus lists each migration with whether it is applied.
func (db *DB) MigrationStatus(ctx context.Context) ([]string, error) {
	p, err := db.migrator()
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	out := make([]string, len(st))
	for i, s := range st {
		out[i] = fmt.Sprintf("%s %s", s.State, s.Source.Path)
	}
	return out, nil
}

func (db *DB) migrator() (*goose.Provider, error) {
	sub, err := fs.Sub(migrations, "migrations/"+string(db.dialect))
	if err != nil {
		return nil, err
	}
	gd := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if db.dialect == Postgres {
		gd = goose.DialectPostgres
		// Instances starting together on one database take turns: the
		// first migrates, the others wait on an advisory lock (retried
		// every second for up to 5 minutes) and then find nothing to do.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, fmt.Errorf("migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(gd, db.write, sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}
