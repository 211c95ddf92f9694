package store

import (
	"context"
	"strings"
	"sync"

	"github.com/agentline/agentline"
)

// maxSessionBatch bounds one group insert: 64 rows of 8 parameters stay
// far below both databases' parameter limits.
const maxSessionBatch = 64

// sessionBatch is group commit for the widget API's hottest write. The
// sessions that arrive while one insert is in flight are written together
// by the next one, in one statement and one commit: a busy PostgreSQL
// spends about half the CPU per session on a three-row insert that it
// spends on three one-row inserts (docs/benchmarks.md), and each session
// waits for one round trip instead of queueing for a pooled connection.
// Nothing waits to fill a batch: a request that finds no insert in flight
// writes at once. The batch is an optimisation only: when its statement
// fails (a duplicate id, a deleted project, a cancelled leader), each
// session is written alone with its own context, so errors stay per
// request.
type sessionBatch struct {
	mu      sync.Mutex
	queue   []*sessionWait
	leading bool
}

// sessionWait is one session in the queue and, once done, its outcome.
type sessionWait struct {
	s agentline.WidgetSession
	// turn receives true when this waiter is to lead the next insert, or
	// false when its outcome is set.
	turn     chan bool
	inserted bool // written; false with ok: its project has an endpoint
	ok       bool // false: write it alone
}

// insert writes s together with whatever else is queued. It reports
// whether s was written (false: its project has an enabled webhook
// endpoint, so the caller writes it with its event) and ok false when the
// batch failed and the caller must write s alone.
func (b *sessionBatch) insert(ctx context.Context, db *DB, s agentline.WidgetSession) (inserted, ok bool) {
	w := &sessionWait{s: s, turn: make(chan bool, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, w)
	lead := !b.leading
	b.leading = true
	b.mu.Unlock()
	if !lead && !<-w.turn {
		return w.inserted, w.ok
	}
	b.flush(ctx, db, w)
	return w.inserted, w.ok
}

// flush writes the head of the queue (the leader's own session first),
// tells each waiter its outcome and then hands the lead to the first
// session that arrived meanwhile: one insert is in flight at a time, and
// no request leads more than one.
func (b *sessionBatch) flush(ctx context.Context, db *DB, leader *sessionWait) {
	b.mu.Lock()
	n := min(len(b.queue), maxSessionBatch)
	batch := b.queue[:n:n]
	b.queue = append([]*sessionWait(nil), b.queue[n:]...)
	b.mu.Unlock()
	written, err := db.insertSessions(ctx, batch)
	for _, w := range batch {
		w.ok = err == nil
		w.inserted = written[w.s.ID]
		if w != leader {
			w.turn <- false
		}
	}
	b.mu.Lock()
	var next *sessionWait
	if len(b.queue) > 0 {
		next = b.queue[0]
	} else {
		b.leading = false
	}
	b.mu.Unlock()
	if next != nil {
		next.turn <- true
	}
}

// insertSessions writes the batch's sessions whose project has no enabled
// webhook endpoint in one statement and returns the ids written.
func (db *DB) insertSessions(ctx context.Context, batch []*sessionWait) (map[string]bool, error) {
	row := "(?, ?, ?, ?, ?, ?, ?, ?)"
	if db.dialect == Postgres {
		row = "(?::text, ?::bigint, ?::bigint, ?::bigint, ?::text, ?::text, ?::text, ?::timestamptz)"
	}
	rows := make([]string, len(batch))
	args := make([]any, 0, 8*len(batch))
	for i, w := range batch {
		s := w.s
		rows[i] = row
		args = append(args, s.ID, s.ProjectID, s.ChannelID, s.AgentID, s.Origin, s.Provider, s.Model, s.StartedAt)
	}
	q := `WITH v (id, project_id, channel_id, agent_id, origin, provider, model, started_at) AS (VALUES ` + strings.Join(rows, ", ") + `)
		INSERT INTO widget_sessions (id, project_id, channel_id, agent_id, origin, provider, model, started_at)
		SELECT id, project_id, channel_id, agent_id, origin, provider, model, started_at FROM v
		WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.project_id = v.project_id AND e.enabled)
		RETURNING id`
	ids, err := queryAll(ctx, db.writer(), func(r interface{ Scan(...any) error }) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, q, args...)
	if err != nil {
		return nil, err
	}
	written := make(map[string]bool, len(ids))
	for _, id := range ids {
		written[id] = true
	}
	return written, nil
}
