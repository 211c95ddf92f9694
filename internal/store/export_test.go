package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
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

// HoldSessionInserts blocks inserts into widget_sessions until release:
// on SQLite by holding the one write connection in a transaction, on
// PostgreSQL by a transaction holding the table in SHARE mode. Neither
// counts in Statements.
func (db *DB) HoldSessionInserts(t testing.TB) (release func()) {
	t.Helper()
	tx, err := db.write.BeginTx(context.Background(), nil)
	if err == nil && db.dialect == Postgres {
		_, err = tx.Exec(`LOCK TABLE widget_sessions IN SHARE MODE`)
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Commit(); err != nil {
			t.Error(err)
		}
	}
}

// QueuedSessions counts the sessions waiting for the next group insert.
func (db *DB) QueuedSessions() int { return db.sessions.Queued() }

// ReadAdmin reads one row of a query into dest, behind the store's back.
func (db *DB) ReadAdmin(ctx context.Context, q string, dest ...any) error {
	return db.reader().queryRow(ctx, q).Scan(dest...)
}

// RawProviderAccountRow is every column of a provider account's row as the
// database returns it, as text, for the tests that look for a key in clear.
func (db *DB) RawProviderAccountRow(ctx context.Context, t testing.TB, projectID int64, kind string) string {
	t.Helper()
	var baseURL, sealed, last4, kindCol string
	if err := db.reader().queryRow(ctx, `SELECT kind, base_url, sealed_key, key_last4 FROM provider_accounts WHERE project_id = ? AND kind = ?`,
		projectID, kind).Scan(&kindCol, &baseURL, &sealed, &last4); err != nil {
		t.Fatal(err)
	}
	return kindCol + "|" + baseURL + "|" + sealed + "|" + last4
}

// AuditRows is every row of the audit log as text, whatever its project,
// for tests that look for what must never be there.
func (db *DB) AuditRows(ctx context.Context, t testing.TB) string {
	t.Helper()
	rows, err := queryAll(ctx, db.reader(), scanString, `SELECT coalesce(cast(project_id AS TEXT), '') || ' ' || actor_kind || ' ' ||
		actor_label || ' ' || action || ' ' || resource_kind || ' ' || resource_id || ' ' || changes || ' ' || client_ip || ' ' || request_id
		FROM audit_log ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(rows, "\n")
}

// The statements of a call's record that TestLiveCallConditions looks at.
const (
	UpdateCallReport = updateCallReport
	CallIsLive       = callIsLive
)

// Explain is SQLite's program (EXPLAIN: one opcode a line) or plan
// (EXPLAIN QUERY PLAN: one step a line) for q, with args parameters, all
// null.
func (db *DB) Explain(ctx context.Context, t testing.TB, plan bool, q string, args int) []string {
	t.Helper()
	rows, err := db.reader().query(ctx, map[bool]string{false: "EXPLAIN ", true: "EXPLAIN QUERY PLAN "}[plan]+q, make([]any, args)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ConversationWithWriteBetween reads conversation id as Conversation does,
// in one read transaction when inTx, else statement by statement on the
// pool; write runs just before the read's second statement, as a write
// landing in the middle of an answer would.
func (db *DB) ConversationWithWriteBetween(ctx context.Context, projectID int64, id string, inTx bool, write func()) (agentline.Conversation, error) {
	return writeBetween(ctx, db, inTx, write, func(c conn) (agentline.Conversation, error) { return conversationIn(ctx, c, projectID, id) })
}

// CampaignWithWriteBetween is ConversationWithWriteBetween for Campaign.
func (db *DB) CampaignWithWriteBetween(ctx context.Context, projectID, id int64, inTx bool, write func()) (agentline.Campaign, error) {
	return writeBetween(ctx, db, inTx, write, func(c conn) (agentline.Campaign, error) { return campaignIn(ctx, c, projectID, id) })
}

// CampaignContactsWithWriteBetween is ConversationWithWriteBetween for
// CampaignContacts.
func (db *DB) CampaignContactsWithWriteBetween(ctx context.Context, projectID, campaignID int64, inTx bool, write func()) ([]agentline.CampaignContact, error) {
	return writeBetween(ctx, db, inTx, write, func(c conn) ([]agentline.CampaignContact, error) {
		return campaignContactsIn(ctx, c, projectID, campaignID, "", 0, 100)
	})
}

// WidgetSessionsWithWriteBetween is ConversationWithWriteBetween for
// WidgetSessions.
func (db *DB) WidgetSessionsWithWriteBetween(ctx context.Context, projectID int64, inTx bool, write func()) ([]agentline.SessionWithEvents, error) {
	return writeBetween(ctx, db, inTx, write, func(c conn) ([]agentline.SessionWithEvents, error) {
		return widgetSessionsIn(ctx, c, projectID, agentline.SessionFilter{Limit: 100})
	})
}

// WebhookDeliveryWithWriteBetween is ConversationWithWriteBetween for
// WebhookDelivery.
func (db *DB) WebhookDeliveryWithWriteBetween(ctx context.Context, projectID, endpointID, id int64, inTx bool, write func()) (agentline.WebhookDelivery, error) {
	return writeBetween(ctx, db, inTx, write, func(c conn) (agentline.WebhookDelivery, error) {
		return webhookDeliveryIn(ctx, c, projectID, endpointID, id)
	})
}

// writeBetween is read's answer, read in one transaction (readIn) when
// inTx, else on the pool, with write run just before its second statement.
func writeBetween[T any](ctx context.Context, db *DB, inTx bool, write func(), read func(c conn) (T, error)) (T, error) {
	wrapped := func(c conn) (T, error) {
		c.q = &beforeSecond{querier: c.q, fn: write}
		return read(c)
	}
	if inTx {
		return readIn(ctx, db, wrapped)
	}
	return wrapped(db.reader())
}

// beforeSecond is a querier that runs fn once, before its second statement.
type beforeSecond struct {
	querier
	n  int
	fn func()
}

func (q *beforeSecond) next() {
	if q.n++; q.n == 2 {
		q.fn()
	}
}

func (q *beforeSecond) ExecContext(ctx context.Context, s string, args ...any) (sql.Result, error) {
	q.next()
	return q.querier.ExecContext(ctx, s, args...)
}

func (q *beforeSecond) QueryContext(ctx context.Context, s string, args ...any) (*sql.Rows, error) {
	q.next()
	return q.querier.QueryContext(ctx, s, args...)
}

func (q *beforeSecond) QueryRowContext(ctx context.Context, s string, args ...any) *sql.Row {
	q.next()
	return q.querier.QueryRowContext(ctx, s, args...)
}
