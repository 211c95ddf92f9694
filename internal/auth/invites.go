package auth

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/agentline/agentline"
)

// InviteTTL is how long an invite or reset link can be used.
const InviteTTL = 7 * 24 * time.Hour

// InviteStore is what invites and password changes need from storage.
type InviteStore interface {
	CreateInvite(ctx context.Context, i agentline.Invite, tokenHash string, createdBy int64) (agentline.Invite, error)
	InviteByTokenHash(ctx context.Context, tokenHash string) (agentline.Invite, error)
	AcceptInvite(ctx context.Context, tokenHash, passwordHash string) (agentline.Invite, error)
	SetPassword(ctx context.Context, userID int64, passwordHash, keep string) error
}

var errBadLink = agentline.Errorf(agentline.ENotFound, "this link is unknown, used or expired; ask the project's owner for a new one")

// ChangePassword sets the signed-in user's password when current is
// their password, and signs out their other sessions: all but token's.
func (s *Service) ChangePassword(ctx context.Context, token, current, next string) error {
	u, ok := UserFrom(ctx)
	if !ok {
		return agentline.Errorf(agentline.EUnauthorized, "sign in first")
	}
	_, hash, err := s.store.UserByEmail(ctx, u.Email)
	if err != nil {
		return err
	}
	if err := s.verifyPassword(u.Email, hash, current, "current_password", "the current password is wrong"); err != nil {
		return err
	}
	newHash, err := s.newPassword("new_password", next)
	if err != nil {
		return err
	}
	return s.store.SetPassword(ctx, u.ID, newHash, HashToken(token))
}

// verifyPassword checks an account's password outside sign-in (a password
// change, an invite for an existing account), counting failures against
// the email like failed sign-ins, so that neither is a way around the
// throttle. A wrong password is invalid on field with message.
func (s *Service) verifyPassword(email, hash, password, field, message string) error {
	keys := []string{"email:" + strings.ToLower(strings.TrimSpace(email))}
	if wait := s.throttle.blocked(keys, s.now()); wait > 0 {
		return &agentline.Error{Code: agentline.ERateLimited, RetryAfter: int(wait.Seconds()) + 1,
			Message: "too many wrong passwords; try again later"}
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		s.throttle.fail(keys, s.now())
		return agentline.Invalid(field, "%s", message)
	}
	return nil
}

// newPassword checks a new password and returns its hash; field names it
// in errors.
func (s *Service) newPassword(field, password string) (string, error) {
	if len(password) < MinPasswordLength {
		return "", agentline.Invalid(field, "password must be at least %d characters", MinPasswordLength)
	}
	if len(password) > 72 {
		return "", agentline.Invalid(field, "password is longer than 72 bytes")
	}
	return hashPassword(password, s.cost)
}

// CreateInvite makes a single-use link, valid for InviteTTL, by the
// signed-in user (whom the caller authorized as the project's owner). An
// invite makes email a member with role; a reset sets the password of
// email, who must be a member of the project, and ignores role. The token
// is in the answer only.
func (s *Service) CreateInvite(ctx context.Context, projectID int64, kind agentline.InviteKind, email string, role agentline.Role) (agentline.Invite, error) {
	u, _ := UserFrom(ctx)
	email = strings.TrimSpace(email)
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || a.Name != "" {
		return agentline.Invite{}, agentline.Invalid("email", "%q is not an email address", email)
	}
	switch kind {
	case "", agentline.InviteJoin:
		kind = agentline.InviteJoin
		if !role.Valid() {
			return agentline.Invite{}, agentline.Invalid("role", "role must be owner, editor or viewer")
		}
	case agentline.InviteReset:
		member, _, err := s.store.UserByEmail(ctx, email)
		if err == nil {
			role, err = s.store.MemberRole(ctx, projectID, member.ID)
		}
		if errors.Is(err, agentline.ErrNotFound) {
			return agentline.Invite{}, agentline.Invalid("email", "%s is no member of this project", email)
		} else if err != nil {
			return agentline.Invite{}, err
		}
	default:
		return agentline.Invite{}, agentline.Invalid("kind", "kind must be invite or reset")
	}
	token, err := NewToken("ali_")
	if err != nil {
		return agentline.Invite{}, err
	}
	inv := agentline.Invite{ProjectID: projectID, Kind: kind, Email: email, Role: role,
		ExpiresAt: s.now().Add(InviteTTL).UTC().Truncate(time.Second)}
	if inv, err = s.store.CreateInvite(ctx, inv, HashToken(token), u.ID); err != nil {
		return inv, err
	}
	inv.Token, inv.URL = token, "/#/invite/"+token
	return inv, nil
}

// AcceptInvite uses up the link of token. A reset sets password as the
// member's password. An invite for an email that has no account creates
// one with password; for an existing account password must be its
// password. Either way the email's user becomes a member.
func (s *Service) AcceptInvite(ctx context.Context, token, password string) (agentline.Invite, error) {
	th := HashToken(token)
	inv, err := s.store.InviteByTokenHash(ctx, th)
	if errors.Is(err, agentline.ErrNotFound) {
		return inv, errBadLink
	} else if err != nil {
		return inv, err
	}
	var hash string
	_, old, err := s.store.UserByEmail(ctx, inv.Email)
	switch {
	case err != nil && !errors.Is(err, agentline.ErrNotFound):
		return inv, err
	case inv.Kind == agentline.InviteJoin && err == nil:
		if err := s.verifyPassword(inv.Email, old, password, "password", "an account with the email "+inv.Email+" exists: enter its password"); err != nil {
			return inv, err
		}
	default:
		if hash, err = s.newPassword("password", password); err != nil {
			return inv, err
		}
	}
	inv, err = s.store.AcceptInvite(ctx, th, hash)
	if errors.Is(err, agentline.ErrNotFound) {
		return inv, errBadLink
	}
	return inv, err
}
