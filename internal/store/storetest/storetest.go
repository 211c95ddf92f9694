// Package storetest opens fresh, migrated databases for tests: a temp SQLite
// file, or a new database in a throwaway PostgreSQL cluster started with
// initdb and postgres on a temp dir, reached over a unix socket.
//
// PostgreSQL tests are skipped when the server binaries are missing, and fail
// instead when AGENTLINE_REQUIRE_POSTGRES=1. A package whose tests use
// PostgreSQL calls Main from its TestMain so the cluster stops at the end.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/store"
)

// Dialect is store.Dialect under a name of this package, so that a test
// helper which only picks the database (apptest) depends on storetest alone:
// only internal/app, cmd/agentline and the store's own packages import the
// store.
type Dialect = store.Dialect

// Dialects lists the databases a test should run against.
func Dialects() []store.Dialect { return []store.Dialect{store.SQLite, store.Postgres} }

// ForEach runs fn as a subtest against a fresh database of each dialect.
func ForEach(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(string(d), func(t *testing.T) {
			fn(t, Open(t, d))
		})
	}
}

// Open returns a fresh, migrated database of the dialect, closed when the
// test ends.
func Open(t testing.TB, d store.Dialect) *store.DB {
	t.Helper()
	u := URL(t, d)
	ctx := context.Background()
	db, err := store.Open(ctx, u)
	if err != nil {
		t.Fatalf("open %s: %v", d, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate %s: %v", d, err)
	}
	return db
}

// URL returns the URL of a fresh, migrated database of the dialect without
// data: a copy of a template migrated once per package (a file's bytes on
// SQLite, a template database on PostgreSQL), which is much faster than
// migrating each (most of a second under -race on SQLite).
func URL(t testing.TB, d store.Dialect) string {
	t.Helper()
	return newURL(t, d, "agentline_template")
}

// EmptyURL returns the URL of a fresh database of the dialect with no
// tables at all, for tests of migrating.
func EmptyURL(t testing.TB, d store.Dialect) string {
	t.Helper()
	return newURL(t, d, "template0")
}

func newURL(t testing.TB, d store.Dialect, template string) string {
	t.Helper()
	switch d {
	case store.SQLite:
		path := filepath.Join(t.TempDir(), "test.db")
		if template == "template0" {
			return "sqlite:" + path
		}
		tpl, err := theSQLiteTemplate.get()
		if err != nil {
			t.Fatalf("sqlite template: %v", err)
		}
		if err := tpl.write(path); err != nil {
			t.Fatalf("sqlite: %v", err)
		}
		return "sqlite:" + path
	case store.Postgres:
		c, err := theCluster.get()
		if err != nil {
			if os.Getenv("AGENTLINE_REQUIRE_POSTGRES") == "1" {
				t.Fatalf("PostgreSQL is required (AGENTLINE_REQUIRE_POSTGRES=1): %v", err)
			}
			t.Skipf("PostgreSQL not available: %v", err)
		}
		u, err := c.newDatabase(template)
		if err != nil {
			t.Fatalf("postgres: %v", err)
		}
		return u
	}
	t.Fatalf("unknown dialect %q", d)
	return ""
}

// Main runs the tests of a package and stops the PostgreSQL cluster, if one
// was started, and runs cleanups, before exiting.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	theCluster.stop()
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

// theCluster is started on first use and shared by the tests of one package.
var theCluster lazyCluster

type lazyCluster struct {
	once sync.Once
	c    *cluster
	err  error
}

func (l *lazyCluster) get() (*cluster, error) {
	l.once.Do(func() { l.c, l.err = startCluster() })
	return l.c, l.err
}

func (l *lazyCluster) stop() {
	if l.c != nil {
		l.c.stop()
	}
}

type cluster struct {
	bin    string
	dir    string
	socket string
	port   int
	cred   *syscall.Credential // set when PostgreSQL runs as the postgres user
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
	n      atomic.Int64
}

// binDir finds initdb: on PATH, else in Debian's versioned directory.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("initdb not found on PATH (install postgresql)")
}

func pgVersion(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func startCluster() (*cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agentline-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir, socket: dir, port: 5432}
	// PostgreSQL refuses to run as root: run it as the postgres user then.
	if os.Geteuid() == 0 {
		pu, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(pu.Uid)
		gid, _ := strconv.Atoi(pu.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.start(ctx); err != nil {
		c.stop()
		return nil, err
	}
	admin, err := store.Open(ctx, c.url("postgres"))
	if err != nil {
		c.stop()
		return nil, err
	}
	err = c.createTemplate(ctx, admin)
	admin.Close()
	if err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// start runs the postmaster on the cluster's data dir and socket and waits
// until it takes connections.
func (c *cluster) start(ctx context.Context) error {
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), "-D", c.data(), "-k", c.socket, "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=400", "-c", "shared_buffers=32MB")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Dir = c.dir
	logf, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own copy
	if c.cred != nil {
		os.Chown(logf.Name(), int(c.cred.Uid), int(c.cred.Gid))
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	c.cmd = cmd
	c.exited = make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(c.exited)
	for {
		db, err := store.Open(ctx, c.url("postgres"))
		if err == nil {
			db.Close()
			return nil
		}
		select {
		case <-c.exited:
			log, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
			return fmt.Errorf("postgres exited at start: %s", log)
		case <-ctx.Done():
			log, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
			return fmt.Errorf("postgres did not start: %v: %s", err, log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// halt stops the postmaster with a fast shutdown (SIGINT: open sessions are
// ended, nothing committed is lost), killing it after 10 s.
func (c *cluster) halt() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
	c.cmd = nil
}

func (c *cluster) url(db string) string {
	q := url.Values{"host": {c.socket}, "port": {strconv.Itoa(c.port)}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + db + "?" + q.Encode()
}

// createTemplate migrates a template database once; every test database is
// a copy of it, which is much faster than migrating each.
func (c *cluster) createTemplate(ctx context.Context, admin *store.DB) error {
	if err := admin.ExecAdmin(ctx, "CREATE DATABASE agentline_template"); err != nil {
		return err
	}
	db, err := store.Open(ctx, c.url("agentline_template"))
	if err != nil {
		return err
	}
	defer db.Close()
	return migrate(ctx, db)
}

// migrate brings db to the schema a server starts on: the store's
// migrations and the job queue's, which the server would otherwise run on
// every test's database at its start (River's ALTER TABLEs on SQLite, under
// -race, were a fifth of internal/app's CPU).
func migrate(ctx context.Context, db *store.DB) error {
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	return jobs.Migrate(ctx, string(db.Dialect()), db.JobPool(), db.MigrationLock)
}

func (c *cluster) newDatabase(template string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := store.Open(ctx, c.url("postgres"))
	if err != nil {
		return "", err
	}
	defer admin.Close()
	name := fmt.Sprintf("t%d", c.n.Add(1))
	if err := admin.ExecAdmin(ctx, "CREATE DATABASE "+name+" TEMPLATE "+template); err != nil {
		return "", err
	}
	return c.url(name), nil
}

func (c *cluster) stop() {
	c.halt()
	if !strings.HasPrefix(c.dir, os.TempDir()) {
		return
	}
	os.RemoveAll(c.dir)
}

// Cluster is a PostgreSQL server of one test's own, for fault tests that
// stop the database and start it again: the package's shared cluster is
// left alone. It is skipped or failed like URL when PostgreSQL is missing.
type Cluster struct{ c *cluster }

// NewCluster initdbs and starts a cluster for t; it is removed when the
// test ends.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	c, err := startCluster()
	if err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL is required (AGENTLINE_REQUIRE_POSTGRES=1): %v", err)
		}
		t.Skipf("PostgreSQL not available: %v", err)
	}
	t.Cleanup(c.stop)
	return &Cluster{c}
}

// URL returns the URL of a fresh, migrated database in the cluster.
func (c *Cluster) URL(t testing.TB) string {
	t.Helper()
	u, err := c.c.newDatabase("agentline_template")
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	return u
}

// Stop shuts the server down fast, as an operator's pg_ctl stop -m fast
// does: connections are cut, committed data stays.
func (c *Cluster) Stop() { c.c.halt() }

// Start starts the stopped server again on the same data and socket.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.c.start(ctx); err != nil {
		t.Fatalf("restart postgres: %v", err)
	}
}
