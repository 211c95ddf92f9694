package store

import (
	"context"
	"math"

	"github.com/agentline/agentline"
)

// ConversationDeliveriesBefore lists the webhook deliveries of a
// conversation's events (those whose subject is the conversation's id)
// older than the delivery before (any when 0: a page after a cursor),
// newest first, at most limit, each with its endpoint's URL. It goes
// through the project's endpoints (a handful) so that the (endpoint_id,
// subject) index finds the rows; withBody's extra column is the endpoint's
// URL here.
func (db *DB) ConversationDeliveriesBefore(ctx context.Context, projectID int64, conversationID string, before int64, limit int) ([]agentline.ConversationDelivery, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	scan := func(row interface{ Scan(...any) error }) (agentline.ConversationDelivery, error) {
		var url string
		d, err := scanDelivery(withBody{row, &url})
		return agentline.ConversationDelivery{WebhookDelivery: d, WebhookURL: url}, err
	}
	return queryAll(ctx, db.reader(), scan, `SELECT `+deliveryColumns+`, e.url`+deliveryFrom+
		`JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE e.project_id = ? AND d.subject = ? AND d.id < ? ORDER BY d.id DESC LIMIT ?`, projectID, conversationID, before, limit)
}
