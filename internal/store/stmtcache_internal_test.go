package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// TestScript tells scripts (several statements, which the driver parses
// one by one and the statement cache does not keep) from single ones.
func TestScript(t *testing.T) {
	for q, want := range map[string]bool{
		`SELECT 1`:                                 false,
		`SELECT 1;`:                                false,
		"SELECT 1; -- done\n":                      false,
		"SELECT 1; /* done */ ":                    false,
		`SELECT ';' FROM t WHERE a = 'x;y'`:        false,
		`SELECT "a;b" FROM [c;d]`:                  false,
		"-- once; twice\nSELECT 1":                 false,
		"SELECT 1 /* a; b */ + 2":                  false,
		`SELECT 'it''s'; `:                         false,
		`SELECT 1; SELECT 2`:                       true,
		"CREATE TABLE a (x);\nCREATE TABLE b (y);": true,
		`SELECT 'a'; SELECT 'b'`:                   true,
	} {
		if got := script(q); got != want {
			t.Errorf("script(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestStmtCacheNestedRows runs one text again while its first rows are
// still open in the same transaction: the second run gets a statement of
// its own, and both read what they should; afterwards the kept statement
// serves again.
func TestStmtCacheNestedRows(t *testing.T) {
	ctx := context.Background()
	db, err := openSQLite(sqliteDSN(filepath.Join(t.TempDir(), "cache.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE n (v INTEGER); INSERT INTO n VALUES (1), (2), (3);"); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT v FROM n WHERE v >= ? ORDER BY v`
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	outer, err := tx.QueryContext(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var sums []int
	for outer.Next() {
		var v int
		outer.Scan(&v)
		var sum int
		if err := tx.QueryRowContext(ctx, `SELECT sum(v) FROM (`+q+`)`, v).Scan(&sum); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.QueryContext(ctx, q, v)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for inner.Next() {
			n++
		}
		inner.Close()
		sums = append(sums, sum*10+n)
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(sums); got != "[63 52 31]" {
		t.Fatalf("sums*10+rows = %s, want [63 52 31]", got)
	}
	for range 3 {
		var v int
		if err := tx.QueryRowContext(ctx, q, 3).Scan(&v); err != nil || v != 3 {
			t.Fatalf("again: %d %v", v, err)
		}
	}
}
