package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// On SQLite every write transaction queues for the one write connection,
// and each pays for its own BEGIN and COMMIT: a commit writes every page
// the transaction changed to the log and takes the shared-memory locks,
// though the transactions queued behind it mostly change the same pages
// (the calls table's last leaf, its indexes, the audit log's). So the
// transactions that queue while one holds the connection commit together:
// whoever takes the connection leads a group of itself and of those
// waiting (up to maxGroup), runs each in a savepoint of one transaction,
// and commits once. Every member still gets its own outcome: a member
// whose function fails is rolled back to its savepoint alone, and none
// returns before the group's commit, which fails them all if it fails.
// With no queue nothing changes: a lone transaction runs as before, with
// no savepoint. Measured in docs/benchmarks.md (round ten): calls that
// come spread out seldom group; a burst of them gets through where one
// commit per transaction refused some.
//
// A member waits for its turn with its context, as it would wait for the
// connection, and the first member still queued after a group leads the
// next one, so no caller runs more than one group and groups go in the
// order they formed. That is coalesce.Group's way, but not its code: a
// group here is taken only once its leader holds the connection (so it
// holds all who queued meanwhile), and a member may leave the queue when
// its context ends.

// maxGroup bounds a group, so a member waits for at most that many others'
// statements before its commit.
const maxGroup = 32

// writeGroup is the queue of write transactions waiting for the one write
// connection. The zero value is ready.
type writeGroup struct {
	mu      sync.Mutex
	queue   []*member
	leading bool
}

// member is one transaction in the queue and, once its group has run, its
// outcome.
type member struct {
	ctx context.Context
	fn  func(c conn) error
	// turn receives true when this member is to lead the next group, or
	// false when err is set.
	turn chan bool
	err  error
}

// groupTx runs fn in the next group of write transactions on SQLite: at
// once when none holds the connection, else behind the group running.
func (db *DB) groupTx(ctx context.Context, fn func(c conn) error) error {
	m := &member{ctx: ctx, fn: fn, turn: make(chan bool, 1)}
	g := &db.group
	g.mu.Lock()
	if !g.leading {
		g.leading = true
		g.mu.Unlock()
		db.lead(m)
		return m.err
	}
	g.queue = append(g.queue, m)
	g.mu.Unlock()
	select {
	case lead := <-m.turn:
		if lead {
			db.lead(m)
		}
		return m.err
	case <-ctx.Done():
	}
	if g.leave(m) {
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	// Taken into a group (or given the lead) meanwhile: it gets its turn,
	// and fails there at once, as a transaction whose context has ended
	// stops at its next statement.
	if <-m.turn {
		db.lead(m)
	}
	return m.err
}

// leave takes m out of the queue, when it is still there.
func (g *writeGroup) leave(m *member) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, q := range g.queue {
		if q == m {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			return true
		}
	}
	return false
}

// take removes the members to run with a leader, up to maxGroup in all.
func (g *writeGroup) take() []*member {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := min(len(g.queue), maxGroup-1)
	taken := append([]*member(nil), g.queue[:n]...)
	g.queue = append(g.queue[:0], g.queue[n:]...)
	return taken
}

// handOff gives the lead to the first member still queued, or ends
// leading when none is.
func (g *writeGroup) handOff() {
	g.mu.Lock()
	var next *member
	if len(g.queue) > 0 {
		next, g.queue = g.queue[0], g.queue[1:]
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	if next != nil {
		next.turn <- true
	}
}

// lead takes the write connection with the leader's context, takes the
// members queued by then, runs them after the leader in one transaction
// and commits it. Every member of the group gets its outcome, then the
// lead passes on, even when a function panics: the transaction is then
// rolled back, every member fails, and the panic goes on in the leader.
func (db *DB) lead(leader *member) {
	group := []*member{leader}
	ended := false
	defer func() {
		if !ended {
			for _, m := range group {
				m.err = errGroupPanicked
			}
		}
		for _, m := range group[1:] {
			m.turn <- false
		}
		db.group.handOff()
	}()
	db.statements.Add(2) // BEGIN, then COMMIT or ROLLBACK
	t, end, err := db.begin(leader.ctx)
	if err != nil {
		leader.err, ended = fmt.Errorf("begin: %w", classify(err)), true
		return
	}
	defer end()
	defer func() {
		if !ended {
			t.Rollback()
		}
	}()
	group = append(group, db.group.take()...)
	if len(group) == 1 {
		leader.err = runMember(leader, conn{db, t, &txState{}})
		finish(t, leader.err == nil, group)
	} else {
		finish(t, db.runMembers(t, group), group)
	}
	ended = true
}

// errGroupPanicked is the error of the members of a group in which a
// function panicked.
var errGroupPanicked = errors.New("store: a write transaction of its group panicked")

// runMember runs m's function on c, then what its transaction does before
// committing.
func runMember(m *member, c conn) error {
	if err := m.ctx.Err(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	err := m.fn(c)
	if err == nil {
		err = c.beforeCommit(m.ctx)
	}
	return err
}

// runMembers runs each member of a group in a savepoint of t, rolled back
// to when its function fails. It reports whether any member is to be
// committed; when a savepoint cannot be kept or undone, the transaction
// is beyond use and every member not failed already fails with that.
func (db *DB) runMembers(t *sql.Tx, group []*member) (commit bool) {
	for _, m := range group {
		c := conn{db, t, &txState{}}
		if _, err := c.exec(context.Background(), `SAVEPOINT member`); err != nil {
			failAll(group, fmt.Errorf("begin: %w", err))
			return false
		}
		m.err = runMember(m, c)
		if err := endMember(c, m.err == nil); err != nil {
			failAll(group, fmt.Errorf("commit: %w", err))
			return false
		}
		commit = commit || m.err == nil
	}
	return commit
}

// endMember ends a member's savepoint on c: kept when keep, else undone.
func endMember(c conn, keep bool) error {
	if !keep {
		if _, err := c.exec(context.Background(), `ROLLBACK TO member`); err != nil {
			return err
		}
	}
	_, err := c.exec(context.Background(), `RELEASE member`)
	return err
}

// failAll gives err to every member that has not failed already.
func failAll(group []*member, err error) {
	for _, m := range group {
		if m.err == nil {
			m.err = err
		}
	}
}

// finish commits t when commit, else rolls it back; a failed commit fails
// every member that had succeeded.
func finish(t *sql.Tx, commit bool, group []*member) {
	if !commit {
		t.Rollback()
		return
	}
	if err := t.Commit(); err != nil {
		failAll(group, fmt.Errorf("commit: %w", classify(err)))
	}
}
