package agentline

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// The types of events agentline sends to a project's webhook endpoints.
const (
	EventConversationStarted  = "conversation.started"
	EventConversationEnded    = "conversation.ended"
	EventConversationAnalyzed = "conversation.analyzed"
	EventLeadCreated          = "lead.created"
	EventCallStatusChanged    = "call.status_changed"
	EventNumberProvisioned    = "number.provisioned"
	EventNumberReleased       = "number.released"
	// A campaign started dialing, one of its contacts reached a final
	// status, and it completed (nobody left to call).
	EventCampaignStarted          = "campaign.started"
	EventCampaignContactCompleted = "campaign.contact.completed"
	EventCampaignCompleted        = "campaign.completed"
	// A test run played all its scenarios.
	EventTestRunCompleted = "test_run.completed"
	EventWebhookTest      = "webhook.test"
)

// eventTypes is the catalog of event types, in the order docs list them.
var eventTypes = []string{
	EventConversationStarted, EventConversationEnded, EventConversationAnalyzed, EventLeadCreated,
	EventCallStatusChanged, EventNumberProvisioned, EventNumberReleased,
	EventCampaignStarted, EventCampaignContactCompleted, EventCampaignCompleted, EventTestRunCompleted, EventWebhookTest,
}

// EventTypes returns the catalog of event types, in the order docs list
// them. It is a copy: no caller can change the catalog another one reads.
func EventTypes() []string { return slices.Clone(eventTypes) }

// KnownEventType reports whether t is in the catalog.
func KnownEventType(t string) bool { return slices.Contains(eventTypes, t) }

// Event is something that happened in a project, sent to the project's
// webhook endpoints that subscribe to its type. Its ID is the webhook-id of
// every delivery of it, retries included, so receivers deduplicate on it.
type Event struct {
	ID        string
	ProjectID int64
	Type      string
	// Subject groups the events that must reach an endpoint in order, such
	// as "call:CA123" or "session:ses_..."; "" for an event on its own.
	Subject   string
	Timestamp time.Time
	Data      json.RawMessage
}

// NewEvent makes an event of the project with a fresh id, timestamped now;
// data is encoded as the envelope's data member.
func NewEvent(projectID int64, typ, subject string, data any) (Event, error) {
	if !KnownEventType(typ) {
		return Event{}, fmt.Errorf("event type %q is not in the catalog", typ)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("event %s data: %w", typ, err)
	}
	var b [16]byte
	rand.Read(b[:])
	return Event{ID: "msg_" + base64.RawURLEncoding.EncodeToString(b[:]), ProjectID: projectID, Type: typ, Subject: subject,
		Timestamp: time.Now().UTC().Truncate(time.Millisecond), Data: raw}, nil
}

// Body is the event as delivered: the Standard Webhooks envelope
// {type, timestamp, data}. It is computed once and stored, so every attempt
// sends (and signs) the very same bytes.
func (e Event) Body() ([]byte, error) {
	return json.Marshal(struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{e.Type, e.Timestamp, e.Data})
}

// Job is a durable background job's arguments: JSON-encodable, with a kind
// naming its worker (the job queue's JobArgs).
type Job interface{ Kind() string }

// Outbox records what a store write causes, inside that write's
// transaction: events for the project's webhook endpoints, and jobs. Either
// all of it is kept with the write, or none of it.
type Outbox interface {
	// Emit stores the event and one delivery for each enabled endpoint of
	// the event's project that subscribes to its type; a DispatchWebhooks
	// job gives those deliveries their jobs once the transaction commits.
	Emit(ctx context.Context, e Event) error
	// Enqueue inserts jobs.
	Enqueue(ctx context.Context, jobs ...Job) error
}

// DeliverWebhook is the job that makes the attempts of one webhook
// delivery.
type DeliverWebhook struct {
	DeliveryID int64 `json:"delivery_id"`
	EndpointID int64 `json:"endpoint_id"`
}

// Kind names DeliverWebhook's worker.
func (DeliverWebhook) Kind() string { return "webhook_delivery" }

// DispatchWebhooks is the job that gives the webhook deliveries stored
// without a job their DeliverWebhook jobs, many in one transaction. A
// transaction that stores deliveries inserts one, unless one is already
// bound to run after it commits, and the job queue inserts it unique: the
// events of many requests share one dispatch instead of each request
// paying for its deliveries' job inserts.
type DispatchWebhooks struct{}

// Kind names DispatchWebhooks' worker.
func (DispatchWebhooks) Kind() string { return "dispatch_webhooks" }

// PruneWebhooks is the recurring job that deletes finished webhook
// deliveries, their attempts and their events past the retention period.
type PruneWebhooks struct{}

// Kind names PruneWebhooks' worker.
func (PruneWebhooks) Kind() string { return "prune_webhooks" }
