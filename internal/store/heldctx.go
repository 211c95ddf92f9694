package store

import (
	"context"
	"database/sql"
)

// On SQLite a statement runs in this process, briefly, and the driver
// watches a cancellable context with a goroutine of its own for each
// statement, BEGIN and COMMIT included: about as many goroutines started,
// woken and ended as a phone call's setup runs statements, which cost the
// call more CPU than some of the statements themselves. So there, once a
// statement holds its connection, it runs with its context's cancellation
// dropped:
//
//   - the wait for a connection still ends with the context (the one write
//     connection may be busy);
//   - a transaction still stops at its next statement once the context has
//     ended, and is rolled back;
//   - a statement, once started, runs to its end. Multi-row reads outside a
//     transaction (lists, exports), the ones that can run long, keep their
//     context.
//
// PostgreSQL keeps every context as it is: there a statement waits on the
// network, and cancelling it is worth its price.

// held is ctx for a statement that holds its connection: on SQLite, ctx
// without its cancellation once ctx is checked, or ctx's error when it has
// ended; elsewhere ctx.
func (db *DB) held(ctx context.Context) (context.Context, error) {
	if db.dialect != SQLite || ctx.Done() == nil {
		return ctx, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// context is the context of c's statement: held inside a transaction on
// SQLite (heldctx.go), ctx otherwise.
func (c conn) context(ctx context.Context) (context.Context, error) {
	if c.holds() {
		return c.db.held(ctx)
	}
	return ctx, nil
}

// holds reports whether c's statements run with held contexts: inside a
// transaction, whose connection is held already.
func (c conn) holds() bool { return c.tx != nil && c.db.dialect == SQLite }

// pooled reports whether a statement of c outside a transaction takes a
// connection of its own on SQLite, to run with a held context.
func (c conn) pooled(ctx context.Context) (*sql.DB, bool) {
	pool, ok := c.q.(*sql.DB)
	return pool, ok && c.db.dialect == SQLite && ctx.Done() != nil
}

// execHeld is exec outside a transaction on SQLite: the statement takes a
// connection of the pool with ctx, then runs held.
func (c conn) execHeld(ctx context.Context, pool *sql.DB, q string, args ...any) (sql.Result, error) {
	sc, err := pool.Conn(ctx)
	if err != nil {
		return nil, classify(err)
	}
	defer sc.Close()
	hctx, err := c.db.held(ctx)
	if err != nil {
		return nil, err
	}
	res, err := sc.ExecContext(hctx, q, args...)
	return res, classify(err)
}

// queryRowHeld is queryRow outside a transaction on SQLite, as execHeld;
// the connection goes back to the pool once the row is scanned.
func (c conn) queryRowHeld(ctx context.Context, pool *sql.DB, q string, args ...any) row {
	sc, err := pool.Conn(ctx)
	if err != nil {
		return row{err: classify(err)}
	}
	hctx, err := c.db.held(ctx)
	if err != nil {
		sc.Close()
		return row{err: err}
	}
	return row{r: sc.QueryRowContext(hctx, q, args...), conn: sc}
}

// begin begins a write transaction; end is to be called once it has ended.
func (db *DB) begin(ctx context.Context) (t *sql.Tx, end func(), err error) {
	return db.beginOn(ctx, db.write, nil)
}

// beginOn begins a transaction with opts on a connection of pool; end is
// to be called once it has ended.
func (db *DB) beginOn(ctx context.Context, pool *sql.DB, opts *sql.TxOptions) (t *sql.Tx, end func(), err error) {
	if db.dialect == SQLite && ctx.Done() != nil {
		return db.beginHeld(ctx, pool, opts)
	}
	t, err = pool.BeginTx(ctx, opts)
	return t, func() {}, err
}

// beginHeld begins a transaction on SQLite: its connection is taken with
// ctx, and the transaction runs held. end returns the connection to the
// pool once the transaction has ended.
func (db *DB) beginHeld(ctx context.Context, pool *sql.DB, opts *sql.TxOptions) (t *sql.Tx, end func(), err error) {
	sc, err := pool.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	hctx, err := db.held(ctx)
	if err == nil {
		t, err = sc.BeginTx(hctx, opts)
	}
	if err != nil {
		sc.Close()
		return nil, nil, err
	}
	return t, func() { sc.Close() }, nil
}
