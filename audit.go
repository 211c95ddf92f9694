package agentline

import (
	"context"
	"time"
)

// ActorKind says who made a change: a person, an API key, or agentline
// itself (a job, a sweep, a command-line tool).
type ActorKind string

// The kinds of actor an audit entry names.
const (
	ActorUser   ActorKind = "user"
	ActorAPIKey ActorKind = "api_key"
	ActorSystem ActorKind = "system"
)

// Actor is who an audit entry holds responsible. A person is named by
// email, a key by its prefix (the key itself is never kept).
type Actor struct {
	Kind      ActorKind `json:"kind"`
	ID        int64     `json:"id,omitempty"`
	Email     string    `json:"email,omitempty"`
	KeyPrefix string    `json:"key_prefix,omitempty"`
}

// AuditResource is what a change touched, by kind and id (text, because
// some resources are named by SIDs or public ids).
type AuditResource struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
}

// AuditEntry is one line of the append-only audit log. Changes maps a
// field to its [before, after] values, secrets masked before they get
// here; ProjectID is zero for instance-level actions.
type AuditEntry struct {
	ID        int64             `json:"id"`
	At        time.Time         `json:"at"`
	Actor     Actor             `json:"actor"`
	Action    string            `json:"action"`
	Resource  AuditResource     `json:"resource"`
	ProjectID int64             `json:"project_id,omitempty"`
	Changes   map[string][2]any `json:"changes,omitempty"`
	ClientIP  string            `json:"client_ip,omitempty"`
	RequestID string            `json:"request_id,omitempty"`
}

// AuditOrigin is the request-scoped part of every entry a request writes:
// who acts and from where. The edge puts it on the request's context once
// authenticated, so that an operation deep in a package records it
// without each signature carrying it.
type AuditOrigin struct {
	Actor     Actor
	ClientIP  string
	RequestID string
}

type auditOriginKey struct{}

// WithAuditOrigin returns ctx carrying o.
func WithAuditOrigin(ctx context.Context, o AuditOrigin) context.Context {
	return context.WithValue(ctx, auditOriginKey{}, o)
}

// AuditOriginFrom returns the origin of ctx's request; a context with none
// (a job, a sweep) is agentline itself acting.
func AuditOriginFrom(ctx context.Context) AuditOrigin {
	if o, ok := ctx.Value(auditOriginKey{}).(AuditOrigin); ok {
		return o
	}
	return AuditOrigin{Actor: Actor{Kind: ActorSystem}}
}
