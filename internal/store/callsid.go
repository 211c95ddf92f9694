package store

import (
	"context"

	"github.com/agentline/agentline"
)

// AttachCallSID gives a reserved call the carrier's SID and its status
// when that moves the call forward: the call's stream may have been
// admitted (in progress) before the carrier's answer to the request came
// back (queued). A call that has ended meanwhile is not found: the
// campaign engine's recovery gave its dial up, so the carrier's call
// belongs to an attempt given up (the caller hangs it up).
func (db *DB) AttachCallSID(ctx context.Context, projectID, callID int64, callSID, status string) (agentline.Call, error) {
	err := db.tx(ctx, func(c conn) error {
		lock := ""
		if db.dialect == Postgres {
			lock = " FOR UPDATE"
		}
		var current string
		if err := c.queryRow(ctx, `SELECT status FROM calls WHERE project_id = ? AND id = ?`+lock, projectID, callID).Scan(&current); err != nil {
			return notFound(err, "call")
		}
		if agentline.CallStatusFinal(current) {
			return agentline.NotFound("call")
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
	return db.Call(ctx, projectID, callSID)
}
