package auth

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// People join a project only by accepting an invitation, which an owner
// makes for an email and a role. With mail on, it is emailed to that
// address and shown to nobody else; without, its link is shown once to the
// owner to hand over. An invitation for an email that has an account is
// accepted only by that account, signed in; one for a new email creates
// the account. Nothing an owner does or sees tells whether an email has an
// account.

// InviteStore is what invitations need from storage.
type InviteStore interface {
	CreateInvite(ctx context.Context, i agentline.Invite, tokenHash string, createdBy int64, mail bool) (agentline.Invite, error)
	InviteByTokenHash(ctx context.Context, tokenHash string) (agentline.InviteDetails, error)
	AcceptInvite(ctx context.Context, tokenHash string, userID int64) (agentline.Invite, error)
	AcceptInviteNewUser(ctx context.Context, tokenHash, passwordHash string) (agentline.Invite, error)
}

var errBadLink = agentline.Errorf(agentline.ENotFound, "this invitation is unknown, used, withdrawn or expired; ask the project's owner for a new one")

// InvitePath is the console's page of an invitation, before the token.
const InvitePath = "/#/invite/"

// CreateInvite makes an invitation by the signed-in user, whom the caller
// authorized as the project's owner. The answer is the same whatever the
// email: with mail on it holds no token; without, the token and its page
// once.
func (s *Service) CreateInvite(ctx context.Context, projectID int64, email string, role agentline.Role) (agentline.Invite, error) {
	u, _ := UserFrom(ctx)
	email = strings.TrimSpace(email)
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || a.Name != "" {
		return agentline.Invite{}, agentline.Invalid("email", "%q is not an email address", email)
	}
	if !role.Valid() {
		return agentline.Invite{}, agentline.Invalid("role", "role must be owner, editor or viewer")
	}
	// Mailed invitations get their token when the mail is sent; this one
	// is never shown to anyone.
	token, err := NewToken("ali_")
	if err != nil {
		return agentline.Invite{}, err
	}
	inv := agentline.Invite{ProjectID: projectID, Kind: agentline.InviteJoin, Email: email, Role: role,
		ExpiresAt: s.now().Add(s.inviteTTL).UTC().Truncate(time.Second)}
	if inv, err = s.store.CreateInvite(ctx, inv, HashToken(token), u.ID, s.MailEnabled()); err != nil {
		return inv, err
	}
	if s.MailEnabled() {
		inv.Delivery = agentline.DeliveryEmail
		return inv, nil
	}
	inv.Delivery, inv.Token, inv.URL = agentline.DeliveryLink, token, InvitePath+token
	return inv, nil
}

// InviteDetails returns what the live invitation of token offers, for its
// page: the project, the role and who invited.
func (s *Service) InviteDetails(ctx context.Context, token string) (agentline.InviteDetails, error) {
	d, err := s.store.InviteByTokenHash(ctx, HashToken(token))
	if errors.Is(err, agentline.ErrNotFound) {
		return d, errBadLink
	}
	return d, err
}

// AcceptInvite uses up the invitation of token for the signed-in user,
// who must be the invited email's account.
func (s *Service) AcceptInvite(ctx context.Context, token string) (agentline.Invite, error) {
	u, ok := UserFrom(ctx)
	if !ok {
		return agentline.Invite{}, agentline.Errorf(agentline.EUnauthorized, "sign in first")
	}
	d, err := s.InviteDetails(ctx, token)
	if err != nil {
		return agentline.Invite{}, err
	}
	if !strings.EqualFold(d.Email, u.Email) {
		return agentline.Invite{}, agentline.Errorf(agentline.EForbidden,
			"this invitation is for %s, and you are signed in as %s: sign out, then sign in as %s", d.Email, u.Email, d.Email)
	}
	inv, err := s.store.AcceptInvite(ctx, HashToken(token), u.ID)
	if errors.Is(err, agentline.ErrNotFound) {
		return inv, errBadLink
	}
	return inv, err
}

// InviteNewAccount is the answer to accepting an invitation signed out:
// the same whether the account was just made or the email had one
// already, which is then left as it was, and whose holder accepts signed
// in.
type InviteNewAccount struct {
	Next    string `json:"next"`
	Email   string `json:"email"`
	Message string `json:"message"`
}

// AcceptInviteNewAccount uses up the invitation of token by creating the
// invited email's account with password, when the email has none. When it
// has one, nothing changes, and the answer is the same: its holder signs
// in and accepts then. So the invitation's holder, who may be the owner
// that made it when no mail is sent, learns nothing about the account.
func (s *Service) AcceptInviteNewAccount(ctx context.Context, token, password string) (InviteNewAccount, error) {
	d, err := s.InviteDetails(ctx, token)
	if err != nil {
		return InviteNewAccount{}, err
	}
	hash, err := s.newPassword("password", password)
	if err != nil {
		return InviteNewAccount{}, err
	}
	answer := InviteNewAccount{Next: "sign_in", Email: d.Email,
		Message: "Sign in as " + d.Email + " to open " + d.ProjectName + "."}
	_, _, err = s.store.UserByEmail(ctx, d.Email)
	switch {
	case err == nil:
		return answer, nil
	case !errors.Is(err, agentline.ErrNotFound):
		return answer, err
	}
	_, err = s.store.AcceptInviteNewUser(ctx, HashToken(token), hash)
	switch {
	case errors.Is(err, agentline.ErrNotFound):
		return answer, errBadLink
	case agentline.ErrorCode(err) == agentline.EConflict:
		return answer, nil // the account appeared meanwhile: as above
	}
	return answer, err
}
