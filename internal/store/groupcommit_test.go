package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// holdWriter runs a write transaction that holds the write connection
// until release is called, so the transactions started meanwhile queue
// into one group behind it.
func holdWriter(t *testing.T, db *DB) (release func(), done <-chan error) {
	t.Helper()
	held, free := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- db.tx(context.Background(), func(c conn) error {
			close(held)
			<-free
			_, err := c.exec(context.Background(), `INSERT INTO t (x) VALUES (0)`)
			return err
		})
	}()
	<-held
	return func() { close(free) }, errc
}

// waitQueued waits until n transactions wait in the write group's queue.
func waitQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		db.group.mu.Lock()
		q := len(db.group.queue)
		db.group.mu.Unlock()
		if q == n {
			return
		}
	}
	t.Fatalf("%d transactions never queued", n)
}

func rowsOf(t *testing.T, db *DB) map[int]bool {
	t.Helper()
	rows, err := db.writer().query(context.Background(), `SELECT x FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	xs, err := scanAll(rows, func(r interface{ Scan(...any) error }) (int, error) {
		var x int
		return x, r.Scan(&x)
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return seen
}

// TestGroupCommitKeepsEachOutcome: transactions queued behind one that
// holds the write connection commit together, each with its own outcome.
// One whose function fails leaves nothing of its writes; one whose
// context ends while it waits leaves the queue and never runs; the others
// are all committed, with one BEGIN and one COMMIT between them.
func TestGroupCommitKeepsEachOutcome(t *testing.T) {
	db := openHeldTestDB(t)
	release, held := holdWriter(t, db)
	const n = 12
	errFail := errors.New("fails on purpose")
	errs := make([]error, n+1)
	cancelled, cancel := context.WithCancel(context.Background())
	ran := make([]bool, n+1)
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		ctx := context.Background()
		if i == 5 {
			ctx = cancelled
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.tx(ctx, func(c conn) error {
				ran[i] = true
				if _, err := c.exec(ctx, `INSERT INTO t (x) VALUES (?)`, i); err != nil {
					return err
				}
				if i%3 == 0 {
					return fmt.Errorf("member %d: %w", i, errFail)
				}
				return nil
			})
		}()
		waitQueued(t, db, i) // in order, so the test knows who is where
	}
	cancel()
	waitQueued(t, db, n-1)
	before := db.Statements()
	release()
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatalf("the holding transaction: %v", err)
	}
	statements := db.Statements() - before
	seen := rowsOf(t, db)
	for i := 1; i <= n; i++ {
		switch {
		case i == 5:
			if !errors.Is(errs[i], context.Canceled) || ran[i] || seen[i] {
				t.Errorf("cancelled while queued: err %v, ran %v, row %v", errs[i], ran[i], seen[i])
			}
		case i%3 == 0:
			if !errors.Is(errs[i], errFail) || seen[i] {
				t.Errorf("member %d failed: err %v, row kept %v", i, errs[i], seen[i])
			}
		default:
			if errs[i] != nil || !seen[i] {
				t.Errorf("member %d: err %v, row %v", i, errs[i], seen[i])
			}
		}
	}
	// The holder's INSERT; then one BEGIN and COMMIT for the 11 queued
	// (the first leads them), each in a savepoint (SAVEPOINT, RELEASE,
	// and ROLLBACK TO for the 4 that fail), and each one's INSERT.
	if got, want := statements, int64(1+2+11*2+4+11); got != want {
		t.Errorf("%d statements for the group, want %d", got, want)
	}
}

// TestGroupCommitPanic: a function that panics in a group fails every
// member, leaves nothing of the group's writes, goes on panicking in the
// member that led, and leaves the store writable.
func TestGroupCommitPanic(t *testing.T) {
	db := openHeldTestDB(t)
	release, held := holdWriter(t, db)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	var recovered any
	for i := 1; i <= 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					recovered = r
				}
			}()
			errs[i] = db.tx(context.Background(), func(c conn) error {
				if _, err := c.exec(context.Background(), `INSERT INTO t (x) VALUES (?)`, i); err != nil {
					return err
				}
				if i == 2 {
					panic("member 2")
				}
				return nil
			})
		}()
		waitQueued(t, db, i)
	}
	release()
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if recovered != "member 2" {
		t.Errorf("the leader recovered %v, want member 2's panic", recovered)
	}
	for _, i := range []int{2, 3} {
		if !errors.Is(errs[i], errGroupPanicked) {
			t.Errorf("member %d: %v, want the group's panic", i, errs[i])
		}
	}
	if seen := rowsOf(t, db); seen[1] || seen[2] || seen[3] {
		t.Errorf("rows of the panicked group kept: %v", seen)
	}
	if err := db.tx(context.Background(), func(c conn) error {
		_, err := c.exec(context.Background(), `INSERT INTO t (x) VALUES (7)`)
		return err
	}); err != nil || !rowsOf(t, db)[7] {
		t.Fatalf("the store after a panic: %v", err)
	}
}
