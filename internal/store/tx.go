package store

import (
	"context"
	"database/sql"
	"fmt"
)

// tx runs fn in a write transaction, committed when fn returns nil.
func (db *DB) tx(ctx context.Context, fn func(c conn) error) error {
	db.statements.Add(2) // BEGIN, then COMMIT or ROLLBACK
	t, end, err := db.begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", classify(err))
	}
	defer end()
	c := conn{db, t, &txState{}}
	err = fn(c)
	if err == nil {
		err = c.beforeCommit(ctx)
	}
	if err != nil {
		t.Rollback()
		return err
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("commit: %w", classify(err))
	}
	return nil
}

// readTx runs fn in a read-only transaction, so that an answer built from
// several statements sees the database at one moment. Apart, each
// statement sees the latest commit, and writes landing between them mix
// two moments in one answer: a call still live beside the recording stored
// after its end. On PostgreSQL that takes repeatable read; on SQLite a
// read transaction is one snapshot already.
func (db *DB) readTx(ctx context.Context, fn func(c conn) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if db.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	db.statements.Add(2) // BEGIN, then ROLLBACK
	t, end, err := db.beginOn(ctx, db.read, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", classify(err))
	}
	defer end()
	defer t.Rollback() // a read has nothing to commit
	// Without a txState its statements keep their context, as reads
	// outside a transaction do (heldctx.go): a search can run long.
	return fn(conn{db: db, q: t})
}

// readIn is read's answer, read in one read-only transaction (readTx).
func readIn[T any](ctx context.Context, db *DB, read func(c conn) (T, error)) (T, error) {
	var out T
	err := db.readTx(ctx, func(c conn) (err error) {
		out, err = read(c)
		return err
	})
	return out, err
}
