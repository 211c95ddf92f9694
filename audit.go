package agentline

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
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

// AuditFilter picks entries of one project's log (ProjectID > 0) or of the
// instance's own (ProjectID 0: actions on no project), newest first. Empty
// fields do not filter; Before pages (entries with a smaller id).
type AuditFilter struct {
	ProjectID    int64
	ActorKind    ActorKind
	ActorID      int64
	ActorLabel   string // an email or a key prefix
	Action       string
	ResourceKind string
	ResourceID   string
	From, To     time.Time
	Before       int64
	Limit        int
}

// Masked stands in the log for a secret's value, before or after: the log
// says that it changed, never what it is.
const Masked = "[masked]"

// secretField reports whether a field's name says it holds a secret, so
// its values are masked whatever the struct's JSON tags let through.
func secretField(name string) bool {
	n := strings.ToLower(name)
	if n == "key" || strings.HasSuffix(n, "_key") {
		return true
	}
	for _, s := range []string{"secret", "password", "token", "hash", "header", "credential", "sealed"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// AuditChanges is the field-by-field [before, after] of a change, read
// from the objects' public JSON (which already leaves sealed values out),
// with any field named like a secret masked. A nil before is a creation
// (every field of after is new), a nil after a deletion; fields equal on
// both sides and times of the change itself are left out.
func AuditChanges(before, after any) map[string][2]any {
	b, a := jsonFields(before), jsonFields(after)
	out := map[string][2]any{}
	for k, av := range a {
		if bv, ok := b[k]; (!ok && av != nil) || (ok && !reflect.DeepEqual(bv, av)) {
			out[k] = [2]any{b[k], av}
		}
	}
	for k, bv := range b {
		if _, ok := a[k]; !ok {
			out[k] = [2]any{bv, nil}
		}
	}
	for _, k := range []string{"updated_at", "created_at", "id", "project_id"} {
		delete(out, k)
	}
	for k, v := range out {
		if secretField(k) {
			out[k] = MaskedChange(v[0] != nil, v[1] != nil)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// MaskedChange is the [before, after] of a secret: Masked where a value
// was set, null where none was.
func MaskedChange(had, has bool) [2]any {
	var c [2]any
	if had {
		c[0] = Masked
	}
	if has {
		c[1] = Masked
	}
	return c
}

// jsonFields is v's JSON object as a map; anything else (nil, a value that
// is no object) is an empty map.
func jsonFields(v any) map[string]any {
	m := map[string]any{}
	if v == nil {
		return m
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return m
	}
	_ = json.Unmarshal(raw, &m)
	return m
}

// PruneAuditLog is the daily job that deletes the audit log's entries
// older than the retention setting: the log's only way out.
type PruneAuditLog struct{}

// Kind names PruneAuditLog's worker.
func (PruneAuditLog) Kind() string { return "prune_audit_log" }
