package store

import (
	"context"
	"database/sql"
	"sync"
)

// preparedStatements are the statements of hot write paths (emitting an
// event inside a request's transaction), prepared once on the write pool
// after migrating. On SQLite, parsing a statement costs more than running
// a small one; a prepared one is parsed once on the single write
// connection (on PostgreSQL, planned once per connection).
type preparedStatements struct {
	mu sync.Mutex
	by map[string]*sql.Stmt
}

// hotStatements are the statements prepared after migrating.
func (db *DB) hotStatements() []string {
	qs := []string{selectEnabledWebhooks, insertWebhookEvent, insertWebhookDelivery, selectUndispatched}
	if db.dialect == Postgres {
		qs = append(qs, lockDispatchShared)
	}
	return qs
}

// prepareHot prepares the hot statements on the write pool. It runs outside any
// transaction: on SQLite a preparation inside one would wait for the only
// write connection, which the transaction holds. A statement that does not
// prepare runs unprepared.
func (db *DB) prepareHot(ctx context.Context) {
	db.prepared.mu.Lock()
	defer db.prepared.mu.Unlock()
	if db.prepared.by == nil {
		db.prepared.by = map[string]*sql.Stmt{}
	}
	for _, q := range db.hotStatements() {
		if _, ok := db.prepared.by[q]; ok {
			continue
		}
		if st, err := db.write.PrepareContext(ctx, db.rebind(q)); err == nil {
			db.prepared.by[q] = st
		}
	}
}

// prepared returns q's prepared statement, bound to the conn's
// transaction when it is one, or nil when q is not prepared.
func (c conn) prepared(ctx context.Context, q string) *sql.Stmt {
	c.db.prepared.mu.Lock()
	st := c.db.prepared.by[q]
	c.db.prepared.mu.Unlock()
	if st == nil {
		return nil
	}
	if tx, ok := c.q.(*sql.Tx); ok {
		return tx.StmtContext(ctx, st)
	}
	return st
}

// execPrepared is exec with q prepared once.
func (c conn) execPrepared(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st := c.prepared(ctx, q)
	if st == nil {
		return c.exec(ctx, q, args...)
	}
	c.db.statements.Add(1)
	ctx, err := c.context(ctx)
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(ctx, args...)
	return res, classify(err)
}

// queryPrepared is query with q prepared once.
func (c conn) queryPrepared(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st := c.prepared(ctx, q)
	if st == nil {
		return c.query(ctx, q, args...)
	}
	c.db.statements.Add(1)
	ctx, err := c.context(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	return rows, classify(err)
}

// queryRowPrepared is queryRow with q prepared once.
func (c conn) queryRowPrepared(ctx context.Context, q string, args ...any) row {
	st := c.prepared(ctx, q)
	if st == nil {
		return c.queryRow(ctx, q, args...)
	}
	c.db.statements.Add(1)
	ctx, err := c.context(ctx)
	if err != nil {
		return row{err: err}
	}
	return row{r: st.QueryRowContext(ctx, args...)}
}

// closePrepared closes the prepared statements (at Close).
func (db *DB) closePrepared() {
	db.prepared.mu.Lock()
	defer db.prepared.mu.Unlock()
	for q, st := range db.prepared.by {
		st.Close()
		delete(db.prepared.by, q)
	}
}

// scanAll scans every row of rows with scan and closes them.
func scanAll[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, classify(rows.Err())
}
