package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/agentline/agentline"

	"github.com/jackc/pgx/v5/pgconn"
)

// unavailableRetry is the Retry-After, in seconds, that an unreachable
// database suggests: PostgreSQL restarts or fails over in a few seconds.
const unavailableRetry = 5

// classify turns an error that means the database is unreachable into
// agentline's unavailable error, which the HTTP edge answers 503 with
// Retry-After: the request may succeed when retried, and nothing of it was
// committed. Every other error is returned as it is.
func classify(err error) error {
	if err == nil || !Unreachable(err) || agentline.ErrorCode(err) == agentline.EUnavailable {
		return err
	}
	return &agentline.Error{Code: agentline.EUnavailable, RetryAfter: unavailableRetry, Err: err,
		Message: "the database is not reachable right now; nothing was changed, retry in a few seconds"}
}

// Unreachable reports whether err means the database server could not be
// reached or went away (refused or cut connections, a failed connect, a
// server shutting down or starting up) rather than that a query or its data
// was wrong.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08 is connection exception; 57P01-57P03 are admin_shutdown,
		// crash_shutdown and cannot_connect_now.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var op *net.OpError
	switch {
	case errors.As(err, &ce), errors.As(err, &op),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	// pgx reports a connection that died under it as "conn closed".
	return strings.Contains(err.Error(), "conn closed")
}
