package store

// Post-conversation analyses (migration 00015): a pending row and its job
// are written in the transaction that ends a conversation (package
// conversation decides whether, through the transaction's ConversationTx),
// so an analysis is neither lost to a crash nor started for an end that
// was rolled back; the job's result is stored, with its
// conversation.analyzed event, in one transaction that only a pending row
// accepts, so a job that runs twice (its first instance died mid-run)
// stores and announces one result.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// AgentAnalysis returns the agent of the conversation id and its analysis
// settings as stored: those of the agent version the conversation ran, or
// the agent's latest for a conversation that records none; not found when
// the agent is gone.
func (t *convTx) AgentAnalysis(ctx context.Context, projectID int64, id string) (int64, []byte, error) {
	q := `SELECT a.id, a.analysis, v.settings FROM widget_sessions s JOIN agents a ON a.id = s.agent_id
		LEFT JOIN agent_versions v ON v.agent_id = a.id AND v.version = s.agent_version WHERE s.project_id = ? AND s.id = ?`
	var ref any = id
	if callID, ok := agentline.ParseCallConversationID(id); ok {
		q = `SELECT a.id, a.analysis, v.settings FROM calls cl JOIN agents a ON a.id = cl.agent_id
			LEFT JOIN agent_versions v ON v.agent_id = a.id AND v.version = cl.agent_version WHERE cl.project_id = ? AND cl.id = ?`
		ref = callID
	}
	var agentID int64
	var settings string
	var version sql.NullString
	err := t.c.queryRow(ctx, q, projectID, ref).Scan(&agentID, &settings, &version)
	if err != nil || !version.Valid {
		return agentID, []byte(settings), notFound(err, "agent")
	}
	var s agentline.AgentSettings
	if err := json.Unmarshal([]byte(version.String), &s); err != nil {
		return agentID, nil, fmt.Errorf("agent %d version settings: %w", agentID, err)
	}
	raw, err := json.Marshal(s.Analysis)
	return agentID, raw, err
}

// AddPendingAnalysis writes the pending analysis of the conversation id,
// waiting for its call's log when awaitLog, unless it has one (pending or
// not) already.
func (t *convTx) AddPendingAnalysis(ctx context.Context, projectID, agentID int64, id string, awaitLog bool) (bool, error) {
	now := t.db.now()
	var since any
	if awaitLog {
		since = now
	}
	res, err := t.c.exec(ctx, `INSERT INTO conversation_analyses (conversation_id, project_id, agent_id, status, created_at, updated_at, awaits_log_since)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (conversation_id) DO NOTHING`, id, projectID, agentID, agentline.AnalysisPending, now, now, since)
	if err != nil {
		return false, fmt.Errorf("start analysis of %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// AddSkippedAnalysis writes the analysis of the conversation id as
// skipped, finished now, unless it has one already.
func (t *convTx) AddSkippedAnalysis(ctx context.Context, projectID, agentID int64, id string) error {
	now := t.db.now()
	_, err := t.c.exec(ctx, `INSERT INTO conversation_analyses (conversation_id, project_id, agent_id, status, created_at, updated_at, finished_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (conversation_id) DO NOTHING`, id, projectID, agentID, agentline.AnalysisSkipped, now, now, now)
	if err != nil {
		return fmt.Errorf("skip analysis of %s: %w", id, err)
	}
	return nil
}

// EndLogWait ends the wait of the pending analysis of the conversation id
// for its call's log, storing it skipped when skip, and reports whether it
// was waiting.
func (t *convTx) EndLogWait(ctx context.Context, projectID int64, id string, skip bool) (bool, error) {
	now := t.db.now()
	q := `UPDATE conversation_analyses SET awaits_log_since = NULL, updated_at = ?`
	args := []any{now}
	if skip {
		q += `, status = ?, finished_at = ?`
		args = append(args, agentline.AnalysisSkipped, now)
	}
	res, err := t.c.exec(ctx, q+` WHERE project_id = ? AND conversation_id = ? AND awaits_log_since IS NOT NULL`, append(args, projectID, id)...)
	if err != nil {
		return false, fmt.Errorf("end the log wait of %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// QueueAnalysesAwaitingLog gives its job to each pending analysis (at
// most limit) that has waited for its call's log since before: the log is
// not coming (the relay's instance died, or no stream carried the call),
// and the job analyses what was recorded. It returns how many.
func (db *DB) QueueAnalysesAwaitingLog(ctx context.Context, before time.Time, limit int) (int, error) {
	lock := ""
	if db.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED" // instances sweeping at once take different rows
	}
	var jobs []agentline.Job
	err := db.tx(ctx, func(c conn) error {
		rows, err := c.query(ctx, `UPDATE conversation_analyses SET awaits_log_since = NULL, updated_at = ?
			WHERE conversation_id IN (SELECT conversation_id FROM conversation_analyses WHERE awaits_log_since < ?
			ORDER BY awaits_log_since LIMIT ?`+lock+`) RETURNING project_id, conversation_id`, db.now(), before.UTC(), limit)
		if err != nil {
			return err
		}
		jobs, err = scanAll(rows, func(r interface{ Scan(...any) error }) (agentline.Job, error) {
			var j agentline.AnalyzeConversation
			err := r.Scan(&j.ProjectID, &j.ConversationID)
			return j, err
		})
		if err != nil {
			return err
		}
		return db.outboxOn(c).Enqueue(ctx, jobs...)
	})
	if err != nil {
		return 0, fmt.Errorf("queue analyses awaiting a log: %w", err)
	}
	return len(jobs), nil
}

const analysisColumns = `conversation_id, status, summary, success, success_reason, data, model, error, attempts, finished_at`

// analysisRow is a stored analysis with the id of its conversation.
type analysisRow struct {
	conversationID string
	agentline.Analysis
}

func scanAnalysis(row interface{ Scan(...any) error }) (analysisRow, error) {
	var r analysisRow
	a := &r.Analysis
	var success sql.NullBool
	var data sql.NullString
	var finished time.Time
	var okFinished bool
	err := row.Scan(&r.conversationID, &a.Status, &a.Summary, &success, &a.SuccessReason, &data, &a.Model, &a.Error, &a.Attempts,
		anyTime{&finished, &okFinished})
	if success.Valid {
		a.Success = &success.Bool
	}
	if data.Valid && data.String != "" {
		a.Data = json.RawMessage(data.String)
	}
	if okFinished {
		a.FinishedAt = &finished
	}
	return r, err
}

// addAnalyses fills in the analyses of rows, with one query.
func addAnalyses(ctx context.Context, c conn, rows []convRow) error {
	if len(rows) == 0 {
		return nil
	}
	byID := make(map[string]*convRow, len(rows))
	ids := make([]any, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
		ids[i] = rows[i].ID
	}
	list, err := queryAll(ctx, c, scanAnalysis, `SELECT `+analysisColumns+` FROM conversation_analyses WHERE conversation_id IN (`+placeholders(len(ids))+`)`, ids...)
	if err != nil {
		return err
	}
	for i := range list {
		if conv := byID[list[i].conversationID]; conv != nil {
			conv.Analysis = &list[i].Analysis
		}
	}
	return nil
}

// analysisWhere adds the filter's analysis conditions.
func analysisWhere(f agentline.ConversationFilter, add func(cond string, a ...any)) {
	if f.AnalysisStatus != "" {
		add(`EXISTS (SELECT 1 FROM conversation_analyses a WHERE a.conversation_id = conv.id AND a.status = ?)`, f.AnalysisStatus)
	}
	if f.Success != nil {
		add(`EXISTS (SELECT 1 FROM conversation_analyses a WHERE a.conversation_id = conv.id AND a.success = ?)`, *f.Success)
	}
}

// NoteAnalysisAttempt counts a failed attempt of a pending analysis and
// keeps its reason; the job retries it.
func (db *DB) NoteAnalysisAttempt(ctx context.Context, projectID int64, id, reason string) error {
	_, err := db.writer().exec(ctx, `UPDATE conversation_analyses SET attempts = attempts + 1, error = ?, updated_at = ?
		WHERE project_id = ? AND conversation_id = ? AND status = ?`, truncate(reason, 1000), db.now(), projectID, id, agentline.AnalysisPending)
	return err
}

// FinishAnalysis stores the result of the pending analysis of the
// conversation id (a.Status done, failed or skipped) and, when done,
// emits conversation.analyzed in the same transaction. It reports false,
// and changes nothing, when the analysis is no longer pending: another run
// of the job stored it first.
func (db *DB) FinishAnalysis(ctx context.Context, projectID int64, id string, a agentline.Analysis) (bool, error) {
	if a.Status == agentline.AnalysisPending {
		return false, errors.New("finish analysis: a result cannot be pending")
	}
	stored := false
	err := db.tx(ctx, func(c conn) error {
		now := db.now()
		var data any
		if len(a.Data) > 0 {
			data = string(a.Data)
		}
		var agentID int64
		err := c.queryRow(ctx, `UPDATE conversation_analyses SET status = ?, summary = ?, success = ?, success_reason = ?, data = ?,
			model = ?, error = ?, attempts = attempts + 1, finished_at = ?, updated_at = ?
			WHERE project_id = ? AND conversation_id = ? AND status = ? RETURNING agent_id`,
			a.Status, a.Summary, a.Success, a.SuccessReason, data, a.Model, truncate(a.Error, 1000), now, now,
			projectID, id, agentline.AnalysisPending).Scan(&agentID)
		if err != nil {
			return ignoreNoRows(err)
		}
		stored = true
		if a.Status != agentline.AnalysisDone {
			return nil
		}
		e, err := agentline.NewEvent(projectID, agentline.EventConversationAnalyzed, id, agentline.AnalysisEventData{
			ConversationID: id, AgentID: agentID, Summary: a.Summary, Success: a.Success, SuccessReason: a.SuccessReason,
			Data: a.Data, Model: a.Model, FinishedAt: &now})
		if err != nil {
			return err
		}
		return db.outboxOn(c).Emit(ctx, e)
	})
	return stored, err
}

// truncate cuts s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
