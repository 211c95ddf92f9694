package agentline

import "time"

// KindInvite is the kind of invitations.
const KindInvite Kind = "invite"

// InviteKind tells what accepting a link does.
type InviteKind string

// InviteJoin is the one kind of invitation: accepting it makes the invitee
// a member with the role. (Password resets are links of an account, not of
// a project: see PasswordReset.)
const InviteJoin InviteKind = "invite"

// How an invitation or reset link reaches its holder.
const (
	// DeliveryEmail: agentline mails the link to the address it is for and
	// shows it to nobody else.
	DeliveryEmail = "email"
	// DeliveryLink: the link is in the answer once, to hand over (no mail
	// is configured).
	DeliveryLink = "link"
)

// Invite is an invitation to join a project, made by an owner and accepted
// by the invitee; its token is stored only as its hash.
type Invite struct {
	ID        int64      `json:"id"`
	ProjectID int64      `json:"project_id"`
	Kind      InviteKind `json:"kind"`
	Email     string     `json:"email"`
	Role      Role       `json:"role"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	// Delivery is DeliveryEmail or DeliveryLink, in the answer that made
	// the invitation.
	Delivery string `json:"delivery,omitempty"`
	// Token and URL are set only in the answer that made the invitation,
	// and only when it is delivered as a link.
	Token string `json:"token,omitempty"`
	URL   string `json:"url,omitempty"`
}

// InviteDetails is what an invitation's page shows the invitee before
// they accept: who invited them to what, in which role.
type InviteDetails struct {
	Email       string    `json:"email"`
	Role        Role      `json:"role"`
	ProjectID   int64     `json:"project_id"`
	ProjectName string    `json:"project_name"`
	InvitedBy   string    `json:"invited_by"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// PasswordReset is a single-use link that sets an account's password,
// made for the account's holder (by email) or by an instance administrator.
type PasswordReset struct {
	UserID    int64     `json:"user_id"`
	Email     string    `json:"email"`
	ExpiresAt time.Time `json:"expires_at"`
	// Delivery is DeliveryEmail or DeliveryLink.
	Delivery string `json:"delivery"`
	// Token and URL are in the answer only when delivered as a link.
	Token string `json:"token,omitempty"`
	URL   string `json:"url,omitempty"`
}

// SendInvitation is the job that emails an invitation to its invitee. The
// token is made when the mail is sent, so no usable token is ever stored.
type SendInvitation struct {
	InviteID int64 `json:"invite_id"`
}

// Kind names SendInvitation's worker.
func (SendInvitation) Kind() string { return "send_invitation" }

// SendPasswordReset is the job that emails a reset link to the account
// with Email, if there is one. The job is queued whether or not there is,
// so the request's answer cannot tell.
type SendPasswordReset struct {
	Email string `json:"email"`
	// By is the administrator who asked for it, or 0 for the holder.
	By int64 `json:"by,omitempty"`
}

// Kind names SendPasswordReset's worker.
func (SendPasswordReset) Kind() string { return "send_password_reset" }
