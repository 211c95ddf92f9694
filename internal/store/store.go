// Package store is agentline's storage: one implementation over database/sql
// that runs on SQLite (the embedded default) and on PostgreSQL. Packages that
// use it declare the few methods they need as small interfaces of their own.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/coalesce"
)

// Dialect names the database behind a DB.
type Dialect string

// The two supported databases.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is the storage of agentline. Reads go to a pool; on SQLite, writes go to
// a single connection so that writers queue instead of failing with
// "database is locked".
type DB struct {
	dialect Dialect
	read    *sql.DB
	write   *sql.DB
	now     func() time.Time
	outbox  OutboxOptions
	// statements counts the round trips made through conn and tx, so
	// tests can hold a request type to its count (Statements).
	statements atomic.Int64
	prepared   preparedStatements
	// sessions group-commits widget sessions (sessionbatch.go).
	sessions coalesce.Group[agentline.WidgetSession, bool]
	// endpointCache keeps the projects' enabled webhook endpoints, on
	// SQLite only (endpointcache.go).
	endpointCache *endpointCache
}

// Statements returns how many statements (BEGIN and COMMIT included) the
// store has sent so far; tests diff it around a request.
func (db *DB) Statements() int64 { return db.statements.Load() }

// Open connects to the database named by rawURL: "sqlite:PATH" (PATH may be
// ":memory:" only for tests that keep one connection) or "postgres://...".
// It does not migrate; call Migrate.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	db := &DB{now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }, outbox: OutboxOptions{DeliverySpan: 72 * time.Hour}}
	db.sessions.Flush, db.sessions.Max = db.insertSessions, maxSessionBatch
	switch {
	case strings.HasPrefix(rawURL, "sqlite:"):
		db.dialect = SQLite
		db.endpointCache = &endpointCache{}
		path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
		if path == "" {
			return nil, errors.New("sqlite: empty database path")
		}
		dsn := sqliteDSN(path)
		var err error
		if db.write, err = openSQLite(dsn); err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		db.write.SetMaxOpenConns(1)
		if db.read, err = openSQLite(dsn); err != nil {
			db.write.Close()
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		// As many kept idle as may be open: database/sql keeps 2 by
		// default and closes the others after each use, and a connection
		// closed takes its prepared statements (stmtcache.go) with it;
		// opening one again costs its pragmas and a schema read.
		db.read.SetMaxOpenConns(8)
		db.read.SetMaxIdleConns(8)
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		db.dialect = Postgres
		pool, err := sql.Open("pgx", withConnectTimeout(rawURL))
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		pool.SetMaxOpenConns(pgMaxConns)
		pool.SetMaxIdleConns(pgMaxConns)
		pool.SetConnMaxIdleTime(pgConnMaxIdle)
		db.read, db.write = pool, pool
	default:
		return nil, fmt.Errorf("unsupported database URL %q: use sqlite:PATH or postgres://", rawURL)
	}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// The PostgreSQL pool keeps as many idle connections as it may open: with
// fewer idle than open, a burst opens connections that the pool then
// closes, and the next burst opens them again, at about 5 ms of server CPU
// each (measured: 10 idle of 20 made the widget API cost 355 µs of
// PostgreSQL CPU per request, 20 of 20 brought it to 186 µs). Connections
// idle for pgConnMaxIdle are closed, so a quiet instance gives them back
// to a server other instances share. See docs/deploy.md (tuning).
const (
	pgMaxConns    = 20
	pgConnMaxIdle = 10 * time.Minute
)

// connectTimeout bounds each new PostgreSQL connection, so that requests
// answer 503 unavailable within seconds, not minutes, while the server is
// unreachable (a host that drops packets never refuses). A connect_timeout
// in the URL wins.
const connectTimeout = "5"

func withConnectTimeout(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL // pgx reports the bad URL
	}
	q := u.Query()
	if q.Get("connect_timeout") != "" {
		return rawURL
	}
	q.Set("connect_timeout", connectTimeout)
	u.RawQuery = q.Encode()
	return u.String()
}

// sqliteDSN puts the pragmas every connection needs into the DSN, so that
// each connection of both pools gets them.
func sqliteDSN(path string) string {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(ON)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_time_format", "sqlite")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Dialect tells which database this is.
func (db *DB) Dialect() Dialect { return db.dialect }

// Ping checks that the database answers. It uses the read pool: on SQLite
// the single write connection may be busy with a long write, which says
// nothing about readiness.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.read.PingContext(ctx); err != nil {
		return fmt.Errorf("ping %s: %w", db.dialect, classify(err))
	}
	return nil
}

// Close closes both pools.
func (db *DB) Close() error {
	db.closePrepared()
	err := db.read.Close()
	if db.write != db.read {
		err = errors.Join(err, db.write.Close())
	}
	return err
}

// rebind turns ? placeholders into $1, $2 ... for PostgreSQL. Queries in this
// package never hold a literal question mark.
func (db *DB) rebind(q string) string {
	if db.dialect != Postgres {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// skipLocked ends a claiming SELECT: on PostgreSQL, instances claiming
// rows at once skip each other's (FOR UPDATE SKIP LOCKED); on SQLite the one
// write connection already makes them take turns.
func (db *DB) skipLocked() string {
	if db.dialect == Postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn runs rebound queries on one querier.
type conn struct {
	db *DB
	q  querier
	// tx is what the transaction has done so far; nil outside one.
	tx *txState
}

func (c conn) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	c.db.statements.Add(1)
	if pool, ok := c.pooled(ctx); ok {
		return c.execHeld(ctx, pool, q, args...)
	}
	ctx, err := c.context(ctx)
	if err != nil {
		return nil, err
	}
	res, err := c.q.ExecContext(ctx, c.db.rebind(q), args...)
	return res, classify(err)
}

func (c conn) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	c.db.statements.Add(1)
	ctx, err := c.context(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.q.QueryContext(ctx, c.db.rebind(q), args...)
	return rows, classify(err)
}

func (c conn) queryRow(ctx context.Context, q string, args ...any) row {
	c.db.statements.Add(1)
	if pool, ok := c.pooled(ctx); ok {
		return c.queryRowHeld(ctx, pool, q, args...)
	}
	ctx, err := c.context(ctx)
	if err != nil {
		return row{err: err}
	}
	return row{r: c.q.QueryRowContext(ctx, c.db.rebind(q), args...)}
}

// row is a *sql.Row whose Scan classifies the error like every other
// store call, so an unreachable server is unavailable wherever it shows.
type row struct {
	r    *sql.Row
	err  error     // the statement did not run
	conn *sql.Conn // the connection taken for the row, given back by Scan
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	err := r.r.Scan(dest...)
	if r.conn != nil {
		r.conn.Close()
	}
	return classify(err)
}

// scanString is queryAll's scan of a one-column text result.
func scanString(r interface{ Scan(...any) error }) (string, error) {
	var v string
	return v, r.Scan(&v)
}

// queryAll runs q and scans every row with scan; an empty result is an
// empty, non-nil slice.
func queryAll[T any](ctx context.Context, c conn, scan func(interface{ Scan(...any) error }) (T, error), q string, args ...any) ([]T, error) {
	rows, err := c.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scan)
}

func (db *DB) reader() conn { return conn{db: db, q: db.read} }
func (db *DB) writer() conn { return conn{db: db, q: db.write} }

// isUniqueViolation reports whether err is a unique-constraint failure.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// isForeignKeyViolation reports whether err is a foreign-key failure.
func isForeignKeyViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// notFound turns sql.ErrNoRows into agentline's not-found error for what.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return agentline.NotFound(what)
	}
	return err
}

// mustAffect returns a not-found error for what when res changed no row.
func mustAffect(res sql.Result, err error, what string) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return agentline.NotFound(what)
	}
	return nil
}

// EnsureSetting stores value under key unless a value is already there, and
// returns the value that is stored. Instances starting together agree.
func (db *DB) EnsureSetting(ctx context.Context, key, value string) (string, error) {
	if _, err := db.writer().exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, value); err != nil {
		return "", fmt.Errorf("ensure setting %s: %w", key, err)
	}
	var v string
	err := db.writer().queryRow(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	return v, err
}

// ExecAdmin runs one statement outside a transaction, such as CREATE
// DATABASE. It is for tests and tooling, never for request handling.
func (db *DB) ExecAdmin(ctx context.Context, statement string) error {
	_, err := db.write.ExecContext(ctx, statement)
	return err
}

// utc scans a time column into *t in UTC, whatever zone the driver returns.
func utc(t *time.Time) sql.Scanner { return utcScanner{t} }

type utcScanner struct{ t *time.Time }

func (s utcScanner) Scan(src any) error {
	var nt sql.NullTime
	if err := nt.Scan(src); err != nil {
		return err
	}
	*s.t = nt.Time.UTC()
	return nil
}
