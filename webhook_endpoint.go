package agentline

import "time"

// WebhookEndpoint is a URL of the customer's that receives a project's
// events, signed with its secret (Standard Webhooks).
type WebhookEndpoint struct {
	ID          int64  `json:"id"`
	ProjectID   int64  `json:"project_id"`
	URL         string `json:"url"`
	Description string `json:"description"`
	// Events lists the event types sent, or is ["*"] for all.
	Events  []string `json:"events"`
	Enabled bool     `json:"enabled"`
	// DisabledReason says why agentline disabled the endpoint itself (the
	// receiver answered 410, or failed for the whole retry span); "" when
	// it is enabled or a person disabled it.
	DisabledReason string `json:"disabled_reason"`
	// Secret is "whsec_" + base64 of the signing key. It leaves agentline
	// once, in the answer that creates or rotates it.
	Secret string `json:"-"`
	// PreviousSecret also signs until PreviousSecretUntil, after a rotation.
	PreviousSecret      string     `json:"-"`
	PreviousSecretUntil *time.Time `json:"previous_secret_until,omitempty"`
	// FailingSince is when deliveries started failing; nil while they
	// succeed.
	FailingSince *time.Time `json:"failing_since,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// Wants reports whether the endpoint subscribes to events of type t.
func (e WebhookEndpoint) Wants(t string) bool {
	for _, s := range e.Events {
		if s == "*" || s == t {
			return true
		}
	}
	return false
}

// Secrets are the secrets that sign a delivery at now: the current one, and
// the previous one during a rotation's overlap.
func (e WebhookEndpoint) Secrets(now time.Time) []string {
	s := []string{e.Secret}
	if e.PreviousSecret != "" && e.PreviousSecretUntil != nil && now.Before(*e.PreviousSecretUntil) {
		s = append(s, e.PreviousSecret)
	}
	return s
}

// The states of a webhook delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// WebhookDelivery is one event sent to one endpoint, with its attempts.
type WebhookDelivery struct {
	ID         int64     `json:"id"`
	ProjectID  int64     `json:"project_id"`
	EndpointID int64     `json:"webhook_id"`
	EventID    string    `json:"event_id"`
	EventType  string    `json:"event_type"`
	Subject    string    `json:"-"`
	Status     string    `json:"status"`
	Attempts   int       `json:"attempt_count"`
	LastStatus int       `json:"last_status_code"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// GiveUpAt is when retries stop.
	GiveUpAt time.Time `json:"give_up_at"`
	// History holds the attempts, oldest first, when asked for.
	History []WebhookAttempt `json:"attempts,omitempty"`
	// Body is the event as sent (the signed bytes).
	Body []byte `json:"-"`
}

// WebhookAttempt is one HTTP request of a delivery.
type WebhookAttempt struct {
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code"` // 0 when no answer came
	LatencyMS  int64     `json:"latency_ms"`
	Response   string    `json:"response"` // the answer's first 1 KB
	Error      string    `json:"error,omitempty"`
}
