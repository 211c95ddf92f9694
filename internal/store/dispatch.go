package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentline/agentline"
)

// The statements that decide whether an emitting transaction inserts a
// dispatch job (prepared after migrating, see hotStatements), and the
// lock that dispatches take on PostgreSQL.
const (
	// selectUndispatched: whether a delivery stored before the
	// transaction's first one still waits for its job. On SQLite every
	// delivery committed before has a smaller id; on PostgreSQL one may
	// not, and then the transaction inserts a dispatch job it could have
	// spared, which is safe.
	selectUndispatched = `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE NOT queued AND id < ?)`
	lockDispatchShared = `SELECT pg_advisory_xact_lock_shared(7245091339)`
	lockDispatch       = `SELECT pg_advisory_xact_lock(7245091339)`
)

// txState is what a write transaction has done so far that its later
// statements, and its commit, need to know.
type txState struct {
	dispatch dispatchPlan
	// firstDelivery is the id of the first delivery the transaction
	// stored.
	firstDelivery int64
}

// dispatchPlan is how the deliveries a transaction stores get their
// dispatch: a DispatchWebhooks job, inserted as the transaction's last
// statement (beforeCommit), unless one is bound to run after it commits.
type dispatchPlan int

const (
	// noDispatch: the transaction stored no delivery.
	noDispatch dispatchPlan = iota
	// checkDispatch: it inserts the job unless a delivery stored before
	// still waits for its job (dispatchPending).
	checkDispatch
	// insertDispatch: it inserts the job.
	insertDispatch
)

// storedDelivery notes that the transaction stored delivery id.
func (st *txState) storedDelivery(id int64) {
	if st.dispatch == noDispatch {
		st.dispatch, st.firstDelivery = checkDispatch, id
	}
}

// beforeCommit inserts the transaction's dispatch job, if it needs one.
func (c conn) beforeCommit(ctx context.Context) error {
	switch c.tx.dispatch {
	case noDispatch:
		return nil
	case checkDispatch:
		pending, err := c.dispatchPending(ctx, c.tx.firstDelivery)
		if err != nil || pending {
			return err
		}
	}
	return c.db.outboxOn(c).Enqueue(ctx, agentline.DispatchWebhooks{})
}

// dispatchPending reports whether a delivery stored before the
// transaction's first one still waits for its job. Its dispatch then
// runs after this transaction commits, and its look for deliveries sees
// this one's: the dispatch job need not be inserted again. That insert is
// what an emit costs most (on SQLite, parsing River's statement), and on
// PostgreSQL, when it coalesces with the pending job, it locks that job's
// row until commit, so that emitting transactions of every instance would
// commit one after the other.
//
// "After" holds because a dispatch looks for deliveries only when no
// emitting transaction is between this check and its commit: on SQLite
// every write, River's included, takes its turn on the one write
// connection; on PostgreSQL the check holds a shared advisory lock until
// commit, and DispatchDeliveries takes it exclusively, first.
func (c conn) dispatchPending(ctx context.Context, first int64) (bool, error) {
	if c.db.dialect == Postgres {
		// A statement of its own: the check's snapshot must be taken once
		// the lock is held.
		if _, err := c.execPrepared(ctx, lockDispatchShared); err != nil {
			return false, fmt.Errorf("dispatch: %w", err)
		}
	}
	var pending bool
	if err := c.queryRowPrepared(ctx, selectUndispatched, first).Scan(&pending); err != nil {
		return false, fmt.Errorf("dispatch: %w", err)
	}
	return pending, nil
}

// DispatchDeliveries gives up to limit deliveries that have no job yet
// their DeliverWebhook jobs, oldest first, in one transaction that also
// marks them queued; it returns how many. On PostgreSQL, dispatches take
// turns (an advisory lock, which also waits for the emitting transactions
// between their check and their commit, see dispatchPending), so each
// delivery gets one job.
//
// finish, when not nil, runs next in the transaction: the DispatchWebhooks
// job's completion (see jobs.CompleteTx), so that a transaction storing
// deliveries meanwhile either is seen here or inserts a new dispatch job.
// If that transaction then fills limit, it also inserts the job that
// dispatches the rest.
func (db *DB) DispatchDeliveries(ctx context.Context, limit int, finish func(ctx context.Context, tx *sql.Tx) error) (int, error) {
	n := 0
	err := db.tx(ctx, func(c conn) error {
		if err := db.startDispatch(ctx, c, finish); err != nil {
			return err
		}
		q := `SELECT id, endpoint_id FROM webhook_deliveries WHERE NOT queued ORDER BY id LIMIT ?`
		if db.dialect == Postgres {
			q += ` FOR UPDATE`
		}
		claimed, err := queryAll(ctx, c, func(r interface{ Scan(...any) error }) (agentline.DeliverWebhook, error) {
			var j agentline.DeliverWebhook
			return j, r.Scan(&j.DeliveryID, &j.EndpointID)
		}, q, limit)
		if err != nil || len(claimed) == 0 {
			return err
		}
		jobs, ids := make([]agentline.Job, len(claimed)), make([]any, len(claimed))
		for i, j := range claimed {
			jobs[i], ids[i] = j, j.DeliveryID
		}
		if _, err := c.exec(ctx, `UPDATE webhook_deliveries SET queued = TRUE WHERE id IN (`+placeholders(len(ids))+`)`, ids...); err != nil {
			return err
		}
		n = len(ids)
		if finish != nil && n == limit {
			c.tx.dispatch = insertDispatch
		}
		return db.outboxOn(c).Enqueue(ctx, jobs...)
	})
	if err != nil {
		return 0, fmt.Errorf("dispatch webhook deliveries: %w", err)
	}
	return n, nil
}

// startDispatch takes the dispatch lock on PostgreSQL, then runs finish.
func (db *DB) startDispatch(ctx context.Context, c conn, finish func(ctx context.Context, tx *sql.Tx) error) error {
	if db.dialect == Postgres {
		if _, err := c.exec(ctx, lockDispatch); err != nil {
			return err
		}
	}
	if finish == nil {
		return nil
	}
	tx, ok := c.q.(*sql.Tx)
	if !ok {
		return errors.New("not in a transaction")
	}
	return finish(ctx, tx)
}
