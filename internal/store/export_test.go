package store

import (
	"context"
	"testing"
	"time"
)

// CountKnowledgeIndexRows counts the rows of the full-text index itself (not
// its content table), after checking on SQLite that the index agrees with
// its content: deleted chunks must leave no entries behind.
func (db *DB) CountKnowledgeIndexRows(ctx context.Context, t testing.TB) int {
	t.Helper()
	var n int
	var err error
	if db.dialect == Postgres {
		err = db.reader().queryRow(ctx, `SELECT count(*) FROM knowledge_chunks WHERE tsv IS NOT NULL`).Scan(&n)
	} else {
		if _, err := db.writer().exec(ctx, `INSERT INTO knowledge_fts(knowledge_fts) VALUES ('integrity-check')`); err != nil {
			t.Fatalf("fts integrity-check: %v", err)
		}
		err = db.reader().queryRow(ctx, `SELECT count(*) FROM knowledge_fts_docsize`).Scan(&n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// UseStreamToken is AdmitStream's one use of a token alone, for the tests
// of that check.
func (db *DB) UseStreamToken(ctx context.Context, ref string, expires time.Time) error {
	return useStreamToken(ctx, db.writer(), ref, expires)
}

// WebhookRows counts the rows of the event webhook tables.
func (db *DB) WebhookRows(ctx context.Context, t testing.TB) (events, deliveries, attempts int) {
	t.Helper()
	for _, c := range []struct {
		table string
		n     *int
	}{{"webhook_events", &events}, {"webhook_deliveries", &deliveries}, {"webhook_attempts", &attempts}} {
		if err := db.reader().queryRow(ctx, `SELECT count(*) FROM `+c.table).Scan(c.n); err != nil {
			t.Fatal(err)
		}
	}
	return events, deliveries, attempts
}

// HoldSessionInserts makes the session batch behave as if an insert were
// in flight: sessions created meanwhile queue (QueuedSessions counts them)
// until release hands the lead to the first of them, as the end of a real
// insert does.
func (db *DB) HoldSessionInserts() (release func()) {
	b := &db.sessions
	b.mu.Lock()
	b.leading = true
	b.mu.Unlock()
	return func() {
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
}

// QueuedSessions counts the sessions waiting for the batch's next insert.
func (db *DB) QueuedSessions() int {
	db.sessions.mu.Lock()
	defer db.sessions.mu.Unlock()
	return len(db.sessions.queue)
}
