package agentline

import "time"

// APIKeyPrefix starts every API key, so that a request can tell a key from
// a session token before any lookup, and leaked keys are easy to scan for.
const APIKeyPrefix = "agl_sk_"

// KindAPIKey is a project's API key, addressed by its id for revocation.
const KindAPIKey Kind = "api_key"

// APIKey is a project's key for automation. The key itself is shown once,
// at creation (Key); afterwards only Prefix tells it apart.
type APIKey struct {
	ID         int64      `json:"id"`
	ProjectID  int64      `json:"project_id"`
	Name       string     `json:"name"`
	Role       Role       `json:"role"`
	Prefix     string     `json:"prefix"`
	CreatedBy  int64      `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	Key        string     `json:"key,omitempty"`
}
