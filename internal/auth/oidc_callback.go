package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/agentline/agentline"
)

// claims are what an ID token must tell about the person.
type claims struct {
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
}

// Finish ends a sign-in the provider sent back with code and state: the
// state must be a live sign-in of this browser (started on any instance),
// used once; the code is exchanged with the flow's PKCE verifier, the ID
// token is verified (signature by a key of the provider's JWKS, issuer,
// audience, expiry) and must carry the flow's nonce, a verified email and
// an allowed domain. A Refusal says
// what went wrong for the person; other errors are the server's.
func (s *SSO) Finish(ctx context.Context, code, state, binding string) (SSOLogin, error) {
	f, err := s.take(ctx, state, binding)
	if err != nil {
		return SSOLogin{}, err
	}
	p, err := s.discover(ctx)
	if err != nil {
		return SSOLogin{}, err
	}
	tok, err := s.oauth(p).Exchange(s.ctx(ctx), code, oauth2.VerifierOption(f.verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return SSOLogin{}, &Refusal{Cause: err, Message: fmt.Sprintf("%s did not accept this sign-in (%s). Start again from the sign-in page.", s.name, re.ErrorCode)}
		}
		return SSOLogin{}, err
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return SSOLogin{}, refuse("%s sent no ID token. Start again from the sign-in page.", s.name)
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: s.cfg.ClientID}).Verify(s.ctx(ctx), raw)
	if err != nil {
		return SSOLogin{}, &Refusal{Cause: err, Message: "The identity " + s.name + " sent could not be verified, so you are not signed in. Start again from the sign-in page."}
	}
	if idt.Nonce != f.nonce {
		return SSOLogin{}, refuse("The identity %s sent belongs to another sign-in. Start again from the sign-in page.", s.name)
	}
	var c claims
	if err := idt.Claims(&c); err != nil {
		return SSOLogin{}, refuse("The identity %s sent could not be read. Start again from the sign-in page.", s.name)
	}
	if c.Email == "" || c.EmailVerified == nil || !*c.EmailVerified {
		return SSOLogin{}, refuse("%s has not verified the email address of this account (%s), so it cannot sign in here. Verify it at %s, then try again.", s.name, orNone(c.Email), s.name)
	}
	if !s.domainAllowed(c.Email) {
		return SSOLogin{}, refuse("Accounts of %s cannot sign in to this agentline. Sign in with an account of an allowed organization.", domainOf(c.Email))
	}
	return s.signIn(ctx, idt.Subject, c.Email)
}

func (s *SSO) signIn(ctx context.Context, subject, email string) (SSOLogin, error) {
	u, created, err := s.store.OIDCSignIn(ctx, s.cfg.Issuer, subject, email, true)
	if agentline.ErrorCode(err) == agentline.EConflict {
		return SSOLogin{}, refuse("The agentline account of %s already signs in with another %s identity, so this one cannot claim it. Ask an administrator of this agentline.", email, s.name)
	}
	if err != nil {
		return SSOLogin{}, err
	}
	if u.Disabled {
		return SSOLogin{}, refuse("This account is disabled; ask an administrator of this agentline.")
	}
	login, err := s.svc.startSession(ctx, u, "auth.sso_sign_in")
	return SSOLogin{Login: login, Subject: subject, Created: created}, err
}

func orNone(email string) string {
	if email == "" {
		return "no email given"
	}
	return email
}

func domainOf(email string) string {
	_, d, _ := strings.Cut(email, "@")
	return strings.ToLower(d)
}

func (s *SSO) domainAllowed(email string) bool {
	if len(s.cfg.AllowedDomains) == 0 {
		return true
	}
	d := domainOf(email)
	for _, a := range s.cfg.AllowedDomains {
		if d == a {
			return true
		}
	}
	return false
}
