package store

import (
	"context"

	"github.com/agentline/agentline"
)

// ConversationDeliveries lists the webhook deliveries of a conversation's
// events (those whose subject is the conversation's id), newest first, at
// most limit, each with its endpoint's URL. It goes through the project's
// endpoints (a handful) so that the (endpoint_id, subject) index finds the
// rows; withBody's extra column is the endpoint's URL here.
func (db *DB) ConversationDeliveries(ctx context.Context, projectID int64, conversationID string, limit int) ([]agentline.ConversationDelivery, error) {
	scan := func(row interface{ Scan(...any) error }) (agentline.ConversationDelivery, error) {
		var url string
		d, err := scanDelivery(withBody{row, &url})
		return agentline.ConversationDelivery{WebhookDelivery: d, WebhookURL: url}, err
	}
	return queryAll(ctx, db.reader(), scan, `SELECT `+deliveryColumns+`, e.url`+deliveryFrom+
		`JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE e.project_id = ? AND d.subject = ? ORDER BY d.id DESC LIMIT ?`, projectID, conversationID, limit)
}
