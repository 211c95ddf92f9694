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

// Who can change a password: the account's holder, with the current
// password (ChangePassword) or with a reset link delivered to the
// account's own email (RequestReset, ResetPassword); or an instance
// administrator, who makes a reset link (ResetLink). No project role
// reaches a password. A change or a reset ends the account's other
// sessions and every reset link of it still outstanding.

// ResetStore is what password resets need from storage.
type ResetStore interface {
	CreatePasswordReset(ctx context.Context, userID int64, tokenHash string, createdBy int64, expiresAt time.Time) error
	ResetPassword(ctx context.Context, tokenHash, passwordHash string) (agentline.User, error)
	SetPassword(ctx context.Context, userID int64, passwordHash, keep string) error
}

var errBadResetLink = agentline.Errorf(agentline.ENotFound,
	"this reset link is unknown, used or expired; ask for a new one with \"Forgot password?\" or from an administrator")

// checkPassword compares password with hash ("" for an email without an
// account, compared against a dummy hash so that both take as long), and
// counts a wrong one against the email and the client. Sign-in and
// password change share the counts, so neither is a way around the
// other's limit.
func (s *Service) checkPassword(email, clientIP, hash, password string) error {
	keys := throttleKeys(email, clientIP)
	if wait := s.passwords.blocked(keys, s.now()); wait > 0 {
		return limited(wait, "too many wrong passwords; try again later")
	}
	if hash == "" {
		bcrypt.CompareHashAndPassword(s.dummy(), []byte(password))
		s.passwords.fail(keys, s.now())
		return errBadLogin
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		s.passwords.fail(keys, s.now())
		return errBadLogin
	}
	s.passwords.reset(keys[0])
	return nil
}

func limited(wait time.Duration, message string) error {
	return &agentline.Error{Code: agentline.ERateLimited, RetryAfter: int(wait.Seconds()) + 1, Message: message}
}

// ChangePassword sets the signed-in user's password when current is
// their password, and signs out their other sessions: all but token's.
func (s *Service) ChangePassword(ctx context.Context, token, clientIP, current, next string) error {
	u, ok := UserFrom(ctx)
	if !ok {
		return agentline.Errorf(agentline.EUnauthorized, "sign in first")
	}
	_, hash, err := s.store.UserByEmail(ctx, u.Email)
	if err != nil {
		return err
	}
	if err := s.checkPassword(u.Email, clientIP, hash, current); err != nil {
		if agentline.ErrorCode(err) == agentline.EUnauthorized {
			return agentline.Invalid("current_password", "the current password is wrong")
		}
		return err
	}
	newHash, err := s.newPassword("new_password", next)
	if err != nil {
		return err
	}
	return s.store.SetPassword(ctx, u.ID, newHash, HashToken(token))
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

// MailEnabled reports whether links travel by email.
func (s *Service) MailEnabled() bool { return s.enqueue != nil }

// RequestReset asks for a reset link for the account with email, mailed
// to that address. The answer is the same whether or not there is such an
// account: the job that looks the account up is queued either way.
// Requests are limited per email and per client, counted whatever the
// answer.
func (s *Service) RequestReset(ctx context.Context, email, clientIP string) error {
	email = strings.TrimSpace(email)
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || a.Name != "" {
		return agentline.Invalid("email", "%q is not an email address", email)
	}
	if !s.MailEnabled() {
		return agentline.Errorf(agentline.ENotConfigured,
			"this agentline sends no email (AGENTLINE_SMTP_URL is not set): an instance administrator can make you a reset link")
	}
	keys := throttleKeys(email, clientIP)
	if wait := s.resets.blocked(keys, s.now()); wait > 0 {
		return limited(wait, "too many reset requests; try again later")
	}
	s.resets.fail(keys, s.now())
	return s.enqueue(ctx, agentline.SendPasswordReset{Email: email})
}

// ResetPassword sets the password of the reset link's account; every
// session of the account and every other reset link of it ends.
func (s *Service) ResetPassword(ctx context.Context, token, password string) (agentline.User, error) {
	hash, err := s.newPassword("password", password)
	if err != nil {
		return agentline.User{}, err
	}
	u, err := s.store.ResetPassword(ctx, HashToken(token), hash)
	if errors.Is(err, agentline.ErrNotFound) {
		return u, errBadResetLink
	}
	return u, err
}

// ResetLink makes a reset link for the account u, on behalf of the
// administrator by (0 for an operator at the command line). With mail on
// and byMail, it is mailed to the account's own address and the answer
// holds no link; otherwise the answer holds the link, once.
func (s *Service) ResetLink(ctx context.Context, u agentline.User, by int64, byMail bool) (agentline.PasswordReset, error) {
	r := agentline.PasswordReset{UserID: u.ID, Email: u.Email, ExpiresAt: s.now().Add(s.resetTTL).UTC().Truncate(time.Second)}
	if u.Disabled {
		return r, agentline.Errorf(agentline.EConflict, "the account %s is disabled: enable it first", u.Email)
	}
	if byMail && s.MailEnabled() {
		r.Delivery = agentline.DeliveryEmail
		return r, s.enqueue(ctx, agentline.SendPasswordReset{Email: u.Email, By: by})
	}
	token, expires, err := s.newResetLink(ctx, u.ID, by)
	if err != nil {
		return r, err
	}
	r.Delivery, r.Token, r.URL, r.ExpiresAt = agentline.DeliveryLink, token, ResetPath+token, expires
	return r, nil
}

// ResetPath is the console's page of a reset link, before the token.
const ResetPath = "/#/reset/"

// newResetLink stores a new reset link of the user and returns its token.
func (s *Service) newResetLink(ctx context.Context, userID, by int64) (string, time.Time, error) {
	token, err := NewToken("alr_")
	if err != nil {
		return "", time.Time{}, err
	}
	expires := s.now().Add(s.resetTTL).UTC().Truncate(time.Second)
	return token, expires, s.store.CreatePasswordReset(ctx, userID, HashToken(token), by, expires)
}
