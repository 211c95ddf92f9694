package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/mail"
)

// MailStore is what the mail jobs need from storage.
type MailStore interface {
	RotateInviteToken(ctx context.Context, inviteID int64, tokenHash string) (agentline.InviteDetails, error)
	UserByEmail(ctx context.Context, email string) (agentline.User, string, error)
	CreatePasswordReset(ctx context.Context, userID int64, tokenHash string, createdBy int64, expiresAt time.Time) error
}

// Sender sends one email (mail.Sender).
type Sender interface {
	Send(ctx context.Context, m mail.Message) error
}

// MailAttempts is how often a mail job tries before it gives up: about a
// day on River's backoff, enough to outlast a mail server's outage.
const MailAttempts = 12

// Mailer is the worker of the jobs that email invitations and reset
// links. Each makes its token when it sends, so no usable token waits in
// the database; a retry makes a new one, and a link from an attempt whose
// mail never left is never known to anyone.
type Mailer struct {
	Store  MailStore
	Sender Sender
	// BaseURL is where the console is, for the links (no trailing slash).
	BaseURL string
	// Service makes the reset links, with its TTL.
	Service *Service
}

// Invitations is the worker of SendInvitation jobs.
func (m *Mailer) Invitations() river.Worker[agentline.SendInvitation] { return inviteMailer{Mailer: m} }

// Resets is the worker of SendPasswordReset jobs.
func (m *Mailer) Resets() river.Worker[agentline.SendPasswordReset] { return resetMailer{Mailer: m} }

type inviteMailer struct {
	river.WorkerDefaults[agentline.SendInvitation]
	*Mailer
}

// Work emails the invitation, if it can still be accepted.
func (m inviteMailer) Work(ctx context.Context, job *river.Job[agentline.SendInvitation]) error {
	token, err := NewToken("ali_")
	if err != nil {
		return err
	}
	d, err := m.Store.RotateInviteToken(ctx, job.Args.InviteID, HashToken(token))
	if errors.Is(err, agentline.ErrNotFound) {
		return nil // withdrawn, used, expired, or its inviter lost the right: nothing to send
	}
	if err != nil {
		return err
	}
	return m.Sender.Send(ctx, mail.Message{To: d.Email,
		Subject: fmt.Sprintf("%s invited you to %s on agentline", d.InvitedBy, d.ProjectName),
		Text: fmt.Sprintf("%s invited you to join the project %q on agentline as %s.\n\n"+
			"Open this link to accept (it works once, until %s):\n%s%s%s\n\n"+
			"If you did not expect this invitation, ignore this email.\n",
			d.InvitedBy, d.ProjectName, d.Role, d.ExpiresAt.Format("2 January 2006 15:04 MST"), m.BaseURL, InvitePath, token)})
}

type resetMailer struct {
	river.WorkerDefaults[agentline.SendPasswordReset]
	*Mailer
}

// Work emails a reset link to the account with the job's email, if there
// is one that is enabled; otherwise it sends nothing.
func (m resetMailer) Work(ctx context.Context, job *river.Job[agentline.SendPasswordReset]) error {
	u, _, err := m.Store.UserByEmail(ctx, job.Args.Email)
	if errors.Is(err, agentline.ErrNotFound) || (err == nil && u.Disabled) {
		return nil
	}
	if err != nil {
		return err
	}
	token, expires, err := m.Service.newResetLink(ctx, u.ID, job.Args.By)
	if err != nil {
		return err
	}
	why := "Someone, probably you, asked to reset the password of your agentline account."
	if job.Args.By != 0 {
		why = "An administrator of agentline made you a link to set a new password."
	}
	return m.Sender.Send(ctx, mail.Message{To: u.Email, Subject: "Set a new agentline password",
		Text: fmt.Sprintf("%s\n\nOpen this link to choose a new one (it works once, until %s):\n%s%s%s\n\n"+
			"Setting it signs you out everywhere. If you did not ask for this, ignore this email: your password stays as it is.\n",
			why, expires.Format("2 January 2006 15:04 MST"), m.BaseURL, ResetPath, token)})
}
