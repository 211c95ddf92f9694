// Package agentline holds the domain types and the one error type shared by
// every other package of the service. It imports nothing of ours, so any
// package can use it without import cycles.
package agentline

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to exactly one HTTP status at the HTTP edge.
const (
	EInvalid             = "invalid_request"
	EUnauthorized        = "unauthorized"
	EInvalidKey          = "invalid_key"
	EOriginNotAllowed    = "origin_not_allowed"
	EForbidden           = "forbidden"
	ENotFound            = "not_found"
	EMethodNotAllowed    = "method_not_allowed"
	EConflict            = "conflict"
	ETooLarge            = "too_large"
	ERateLimited         = "rate_limited"
	EUnsupportedProvider = "unsupported_provider"
	EProvider            = "provider_error"
	ECarrier             = "carrier_error"
	ENotConfigured       = "not_configured"
	EUnavailable         = "unavailable"
	EInternal            = "internal"
)

// Error is an error a person can act on: a code from the list above and a
// message that is safe to show to the caller. Field names the request field
// at fault, when there is one.
type Error struct {
	Code    string
	Message string
	Field   string
	// Fields, when set, gives each request field at fault its problem (a
	// form submission with several bad answers).
	Fields map[string]string
	// RetryAfter, when positive, is the number of seconds a rate-limited
	// caller should wait.
	RetryAfter int
	// Err is the underlying cause; it is logged, never shown.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) true for any not-found error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// ErrNotFound matches (with errors.Is) every error whose code is ENotFound.
var ErrNotFound = &Error{Code: ENotFound}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an invalid_request error naming the field at fault.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: EInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a not_found error with a message naming what was missing.
func NotFound(what string) *Error {
	return &Error{Code: ENotFound, Message: what + " not found"}
}

// ErrorCode returns the code of err, EInternal for errors that are not *Error,
// and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the message of err that is safe to show, or a generic
// one for internal errors.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	if errors.As(err, &e) && e.Code == ENotFound {
		return "not found"
	}
	return "internal error"
}
