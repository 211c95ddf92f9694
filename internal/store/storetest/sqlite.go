package storetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentline/agentline/internal/store"
)

// theSQLiteTemplate is a migrated SQLite database, made on first use and
// kept in memory: each test's database is a copy of its files, so nothing
// is left on disk for a package that never calls Main.
var theSQLiteTemplate lazySQLiteTemplate

type lazySQLiteTemplate struct {
	once sync.Once
	tpl  sqliteTemplate
	err  error
}

// sqliteTemplate holds the bytes of a migrated database's files: the main
// file and, should the last close have left one, its write-ahead log.
type sqliteTemplate struct{ main, wal []byte }

func (l *lazySQLiteTemplate) get() (sqliteTemplate, error) {
	l.once.Do(func() { l.tpl, l.err = migrateSQLiteTemplate() })
	return l.tpl, l.err
}

func migrateSQLiteTemplate() (sqliteTemplate, error) {
	dir, err := os.MkdirTemp("", "agentline-sqlite-")
	if err != nil {
		return sqliteTemplate{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+path)
	if err != nil {
		return sqliteTemplate{}, err
	}
	err = migrate(ctx, db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sqliteTemplate{}, err
	}
	var tpl sqliteTemplate
	if tpl.main, err = os.ReadFile(path); err != nil {
		return sqliteTemplate{}, err
	}
	if tpl.wal, err = os.ReadFile(path + "-wal"); err != nil && !os.IsNotExist(err) {
		return sqliteTemplate{}, err
	}
	return tpl, nil
}

// write makes a copy of the template at path.
func (tpl sqliteTemplate) write(path string) error {
	if err := os.WriteFile(path, tpl.main, 0o644); err != nil {
		return err
	}
	if len(tpl.wal) == 0 {
		return nil
	}
	return os.WriteFile(path+"-wal", tpl.wal, 0o644)
}
