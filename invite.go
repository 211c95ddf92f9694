package agentline

import "time"

// KindInvite is the kind of invite and password-reset links.
const KindInvite Kind = "invites"

// InviteKind tells what accepting a link does.
type InviteKind string

// The two kinds of links: an invite makes the email a member with the
// role; a reset sets a member's password.
const (
	InviteJoin  InviteKind = "invite"
	InviteReset InviteKind = "reset"
)

// Invite is a single-use link an owner made; its token is shown once and
// stored only as its hash.
type Invite struct {
	ID        int64      `json:"id"`
	ProjectID int64      `json:"project_id"`
	Kind      InviteKind `json:"kind"`
	Email     string     `json:"email"`
	Role      Role       `json:"role"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	// Token and URL are set only in the answer that made the invite.
	Token string `json:"token,omitempty"`
	URL   string `json:"url,omitempty"`
}
