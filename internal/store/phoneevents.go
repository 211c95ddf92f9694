package store

import (
	"context"
	"strconv"

	"github.com/agentline/agentline"
)

// numberData is the data of number.provisioned and number.released.
type numberData struct {
	Number struct {
		ID          int64  `json:"id"`
		PhoneNumber string `json:"phone_number"`
		AgentID     *int64 `json:"agent_id"`
	} `json:"number"`
}

// emitNumber emits number.provisioned or number.released for n in the
// transaction that stored or removed it.
func (db *DB) emitNumber(ctx context.Context, c conn, typ string, n agentline.PhoneNumber) error {
	var d numberData
	d.Number.ID, d.Number.PhoneNumber, d.Number.AgentID = n.ID, n.PhoneNumber, n.AgentID
	e, err := agentline.NewEvent(n.ProjectID, typ, "number:"+strconv.FormatInt(n.ID, 10), d)
	if err != nil {
		return err
	}
	return db.outboxOn(c).Emit(ctx, e)
}
