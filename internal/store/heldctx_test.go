package store

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// slowCount is a statement that runs long enough (tens of milliseconds)
// to be watched while it runs.
const slowCount = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT count(*) FROM c`

func openHeldTestDB(t *testing.T) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "held.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.writer().exec(ctx, `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// watching runs fn and reports whether, while it ran, the SQLite driver
// had a goroutine watching a context.
func watching(t *testing.T, fn func()) bool {
	t.Helper()
	var seen atomic.Bool
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var buf bytes.Buffer
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			buf.Reset()
			pprof.Lookup("goroutine").WriteTo(&buf, 1)
			if strings.Contains(buf.String(), "modernc.org/sqlite.interruptOnDone") {
				seen.Store(true)
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	return seen.Load()
}

// TestHeldStatementsRunUnwatched: on SQLite, a statement that holds its
// connection (a single-row read, a write, any statement of a transaction)
// runs without the driver's watch of its context, while a multi-row read
// outside a transaction keeps it, and is interrupted when its context ends.
func TestHeldStatementsRunUnwatched(t *testing.T) {
	db := openHeldTestDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n int
	if watching(t, func() {
		if err := db.reader().queryRow(ctx, slowCount).Scan(&n); err != nil {
			t.Error(err)
		}
	}) {
		t.Error("a single-row read was watched")
	}
	if watching(t, func() {
		err := db.tx(ctx, func(c conn) error {
			if err := c.queryRow(ctx, slowCount).Scan(&n); err != nil {
				return err
			}
			_, err := c.exec(ctx, `INSERT INTO t VALUES (1)`)
			return err
		})
		if err != nil {
			t.Error(err)
		}
	}) {
		t.Error("a transaction's statements were watched")
	}
	if !watching(t, func() {
		rows, err := db.reader().query(ctx, slowCount)
		if err != nil {
			t.Error(err)
			return
		}
		rows.Close()
	}) {
		t.Error("a list read outside a transaction was not watched")
	}

	lctx, lcancel := context.WithCancel(context.Background())
	time.AfterFunc(5*time.Millisecond, lcancel)
	rows, err := db.reader().query(lctx, slowCount)
	if err == nil {
		for rows.Next() {
		}
		err = errors.Join(rows.Err(), rows.Close())
	}
	if !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), "interrupt")) {
		t.Errorf("a list read whose context ended: %v, want it interrupted", err)
	}
}

// TestHeldTransactionStopsWithItsContext: a transaction whose context ends
// stops at its next statement and is rolled back; a transaction waiting
// for the one write connection gives up when its context ends; a
// statement whose context has ended does not run.
func TestHeldTransactionStopsWithItsContext(t *testing.T) {
	db := openHeldTestDB(t)
	bg := context.Background()
	ctx, cancel := context.WithCancel(bg)
	err := db.tx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `INSERT INTO t VALUES (1)`); err != nil {
			return err
		}
		cancel()
		_, err := c.exec(ctx, `INSERT INTO t VALUES (2)`)
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("transaction whose context ended: %v, want canceled", err)
	}
	var n int
	if err := db.reader().queryRow(bg, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows after the cancelled transaction: %d, %v; want 0 (rolled back)", n, err)
	}

	if _, err := db.writer().exec(ctx, `INSERT INTO t VALUES (3)`); !errors.Is(err, context.Canceled) {
		t.Errorf("write with an ended context: %v, want canceled", err)
	}
	if err := db.reader().queryRow(ctx, `SELECT 1`).Scan(&n); !errors.Is(err, context.Canceled) {
		t.Errorf("read with an ended context: %v, want canceled", err)
	}

	holder, err := db.write.BeginTx(bg, nil) // the one write connection
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer wcancel()
	err = db.tx(wctx, func(c conn) error { return nil })
	holder.Rollback()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("transaction waiting for the write connection: %v, want deadline exceeded", err)
	}
	if err := db.tx(bg, func(c conn) error {
		_, err := c.exec(bg, `INSERT INTO t VALUES (4)`)
		return err
	}); err != nil {
		t.Errorf("transaction after the wait: %v", err)
	}
}
