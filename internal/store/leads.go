package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agentline/agentline"
)

const leadColumns = `id, project_id, channel_id, mode, answers, session_id, agent_id, created_at`

func scanLead(row interface{ Scan(...any) error }) (agentline.Lead, error) {
	var l agentline.Lead
	var answers string
	var sessionID sql.NullString
	var agentID sql.NullInt64
	if err := row.Scan(&l.ID, &l.ProjectID, &l.ChannelID, &l.Mode, &answers, &sessionID, &agentID, utc(&l.CreatedAt)); err != nil {
		return l, err
	}
	if sessionID.Valid {
		l.SessionID = &sessionID.String
	}
	if agentID.Valid {
		l.AgentID = &agentID.Int64
	}
	if err := json.Unmarshal([]byte(answers), &l.Answers); err != nil {
		return l, fmt.Errorf("lead %d answers: %w", l.ID, err)
	}
	return l, nil
}

// CreateLead stores a lead in l.ProjectID and, for a live chat lead, the
// widget session created for it (s, whose id the caller chose), in one
// transaction: there is never a lead without its session or the reverse.
func (db *DB) CreateLead(ctx context.Context, l agentline.Lead, s *agentline.WidgetSession) (agentline.Lead, error) {
	return db.CreateLeadThen(ctx, l, s, nil)
}

// CreateLeadThen is CreateLead that runs then, when not nil, in the same
// transaction with the stored lead and an outbox: the events and jobs the
// lead causes (lead.created, the notify_url delivery), and the campaign
// contact it becomes (the outbox is an agentline.LeadTx), are kept with it
// or not at all.
func (db *DB) CreateLeadThen(ctx context.Context, l agentline.Lead, s *agentline.WidgetSession,
	then func(ctx context.Context, l agentline.Lead, out agentline.Outbox) error) (agentline.Lead, error) {
	answers, err := json.Marshal(l.Answers)
	if err != nil {
		return l, err
	}
	l.CreatedAt = db.now()
	err = db.tx(ctx, func(c conn) error {
		if s != nil {
			if err := insertSession(ctx, c, *s, l.CreatedAt); err != nil {
				return err
			}
			l.SessionID, l.AgentID = &s.ID, &s.AgentID
		}
		err := c.queryRow(ctx, `INSERT INTO leads (project_id, channel_id, mode, answers, session_id, agent_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			l.ProjectID, l.ChannelID, l.Mode, string(answers), l.SessionID, l.AgentID, l.CreatedAt).Scan(&l.ID)
		if err != nil || then == nil {
			return err
		}
		return then(ctx, l, leadTx{db.outboxOn(c)})
	})
	if isForeignKeyViolation(err) {
		return l, agentline.NotFound("project")
	}
	if isUniqueViolation(err) {
		return l, agentline.Errorf(agentline.EConflict, "the lead's session exists already; try again")
	}
	if err != nil {
		return l, fmt.Errorf("create lead: %w", err)
	}
	return l, nil
}

// Lead returns one lead of the project.
func (db *DB) Lead(ctx context.Context, projectID, id int64) (agentline.Lead, error) {
	l, err := scanLead(db.reader().queryRow(ctx, `SELECT `+leadColumns+` FROM leads WHERE project_id = ? AND id = ?`, projectID, id))
	return l, notFound(err, "lead")
}

// LeadBySession returns the lead a widget session of the project was
// created for.
func (db *DB) LeadBySession(ctx context.Context, projectID int64, sessionID string) (agentline.Lead, error) {
	l, err := scanLead(db.reader().queryRow(ctx, `SELECT `+leadColumns+` FROM leads WHERE project_id = ? AND session_id = ?`, projectID, sessionID))
	return l, notFound(err, "lead")
}

// Leads lists the project's leads, newest first. The filter works as for
// sessions, on created_at.
func (db *DB) Leads(ctx context.Context, projectID int64, f agentline.SessionFilter) ([]agentline.Lead, error) {
	var afterID any
	if f.After != nil {
		id, err := strconv.ParseInt(f.After.ID, 10, 64)
		if err != nil {
			return nil, agentline.Invalid("cursor", "cursor is not one this API gave out: pass next_cursor as it is")
		}
		afterID = id
	}
	where, args := sessionWhere(f, projectID, "created_at", afterID)
	args = append(args, f.Limit, f.Offset)
	return queryAll(ctx, db.reader(), scanLead, `SELECT `+leadColumns+` FROM leads WHERE `+where+
		` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, args...)
}

// DeleteLead deletes a lead of the project (its session stays, as history
// of the conversation).
func (db *DB) DeleteLead(ctx context.Context, projectID, id int64) error {
	return db.deleteOwned(ctx, agentline.KindLead, projectID, id, "lead")
}
