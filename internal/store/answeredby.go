package store

import (
	"context"

	"github.com/agentline/agentline"
)

// RecordAnsweredBy records who answered the call sid of the project, as the
// carrier's answering machine detection says, and returns the call. changed
// is false when the record said so already: a verdict delivered twice is
// acted on once.
func (db *DB) RecordAnsweredBy(ctx context.Context, projectID int64, callSID, answeredBy string) (call agentline.Call, changed bool, err error) {
	res, err := db.writer().exec(ctx, `UPDATE calls SET answered_by = ?, updated_at = ? WHERE project_id = ? AND call_sid = ? AND answered_by <> ?`,
		answeredBy, db.now(), projectID, callSID, answeredBy)
	if err != nil {
		return call, false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return call, false, err
	}
	call, err = db.Call(ctx, projectID, callSID)
	return call, n > 0, err
}
