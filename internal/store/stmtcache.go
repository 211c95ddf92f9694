package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// On SQLite, parsing a statement costs more than running a small one: a
// phone call's reads and writes, River's job inserts, fetches and
// completions, and its idle polling spent most of their CPU in SQLite's
// parser. Each SQLite connection therefore keeps the statements it has run
// prepared, by their text, and runs them again without parsing; the
// queries of the store and of River are a bounded set of texts. (prepared.go
// prepares a few hot statements through database/sql; those still work, and
// on PostgreSQL they are all there is.)

// maxCachedStmts bounds the statements one connection keeps prepared: past
// it, those not in use are finalized and the cache starts again.
const maxCachedStmts = 256

// openSQLite opens a pool on dsn whose connections keep their statements.
func openSQLite(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(stmtCacheConnector{c}), nil
}

// stmtCacheConnector opens SQLite connections that keep their statements.
type stmtCacheConnector struct{ driver.Connector }

func (c stmtCacheConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(sqliteConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("sqlite connection %T lacks a method database/sql uses", conn)
	}
	return &cachingConn{c: sc, stmts: map[string]*cachedStmt{}}, nil
}

// sqliteConn is what the driver's connections do that database/sql uses.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is one SQLite connection with its prepared statements.
// database/sql uses a connection from one goroutine at a time, so the
// cache needs no lock.
type cachingConn struct {
	c     sqliteConn
	stmts map[string]*cachedStmt
}

// cachedStmt is a prepared statement; busy while its rows are open (a
// transaction may run the same text again before closing them: that run
// gets a statement of its own).
type cachedStmt struct {
	st   driver.Stmt
	busy bool
}

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) { return c.c.Prepare(query) }
func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.c.BeginTx(context.Background(), driver.TxOptions{})
}
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.c.BeginTx(ctx, opts)
}
func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.c.PrepareContext(ctx, query)
}
func (c *cachingConn) Ping(ctx context.Context) error         { return c.c.Ping(ctx) }
func (c *cachingConn) ResetSession(ctx context.Context) error { return c.c.ResetSession(ctx) }
func (c *cachingConn) IsValid() bool                          { return c.c.IsValid() }

// Close finalizes the kept statements, then closes the connection.
func (c *cachingConn) Close() error {
	for q, s := range c.stmts {
		s.st.Close()
		delete(c.stmts, q)
	}
	return c.c.Close()
}

// stmt returns the kept statement of query, preparing it the first time,
// or nil when query runs unprepared: a script of several statements, or a
// text whose statement is in use.
func (c *cachingConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil, nil
		}
		return s, nil
	}
	if script(query) {
		return nil, nil
	}
	st, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if len(c.stmts) >= maxCachedStmts {
		for q, s := range c.stmts {
			if !s.busy {
				s.st.Close()
				delete(c.stmts, q)
			}
		}
	}
	s := &cachedStmt{st: st}
	c.stmts[query] = s
	return s, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.c.ExecContext(ctx, query, args)
	}
	s.busy = true
	defer func() { s.busy = false }()
	return s.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.c.QueryContext(ctx, query, args)
	}
	rows, err := s.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	sr, ok := rows.(sqliteRows)
	if !ok {
		rows.Close()
		return c.c.QueryContext(ctx, query, args)
	}
	s.busy = true
	return &cachedRows{sqliteRows: sr, s: s}, nil
}

// sqliteRows is what the driver's rows do that database/sql uses.
type sqliteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// cachedRows are the rows of a kept statement, which is free again once
// they are closed (the driver resets it then).
type cachedRows struct {
	sqliteRows
	s *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.sqliteRows.Close()
	r.s.busy = false
	return err
}

// script reports whether query holds more than one statement: a semicolon
// outside comments, quotes and brackets with more than blanks and comments
// after it. The driver runs a script statement by statement, parsing each
// as it goes; it is not kept.
func script(query string) bool {
	ended := false // a semicolon was seen
	for i := 0; i < len(query); i++ {
		switch ch := query[i]; {
		case ch == '-' && strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				return false
			}
			i += j
		case ch == '/' && strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return false
			}
			i += j + 3
		case ch == '\'' || ch == '"' || ch == '`' || ch == '[':
			end := ch
			if ch == '[' {
				end = ']'
			}
			j := strings.IndexByte(query[i+1:], end) // a doubled quote is two quoted runs in a row
			if j < 0 {
				return false
			}
			if ended {
				return true
			}
			i += j + 1
		case ch == ';':
			ended = true
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
		default:
			if ended {
				return true
			}
		}
	}
	return false
}
