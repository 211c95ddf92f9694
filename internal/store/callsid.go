package store

import (
	"context"
	"database/sql"

	"github.com/agentline/agentline"
)

// AttachCallSID gives a reserved call the carrier's SID and its status
// when that moves the call forward: the call's stream may have been
// admitted (in progress) before the carrier's answer to the request came
// back (queued). A call that has ended meanwhile is not found: the
// campaign engine's recovery gave its dial up, so the carrier's call
// belongs to an attempt given up (the caller hangs it up). Either way a
// campaign call's request has its answer, for its campaign's pace.
func (db *DB) AttachCallSID(ctx context.Context, projectID, callID int64, callSID, status string) (agentline.Call, error) {
	ended := false
	err := db.tx(ctx, func(c conn) error {
		lock := ""
		if db.dialect == Postgres {
			lock = " FOR UPDATE"
		}
		var current string
		var campaignID sql.NullInt64
		if err := c.queryRow(ctx, `SELECT status, campaign_id FROM calls WHERE project_id = ? AND id = ?`+lock,
			projectID, callID).Scan(&current, &campaignID); err != nil {
			return notFound(err, "call")
		}
		if campaignID.Valid {
			if err := db.answeredRequest(ctx, c, callID); err != nil {
				return err
			}
		}
		if ended = agentline.CallStatusFinal(current); ended {
			return nil
		}
		if !agentline.CallStatusAdvances(current, status) {
			status = current
		}
		_, err := c.exec(ctx, `UPDATE calls SET call_sid = ?, status = ?, updated_at = ? WHERE id = ?`, callSID, status, db.now(), callID)
		return err
	})
	if err != nil {
		return agentline.Call{}, err
	}
	if ended {
		return agentline.Call{}, agentline.NotFound("call")
	}
	return db.Call(ctx, projectID, callSID)
}
