package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unreachable reports whether err means the database server could not be
// reached or went away (refused or cut connections, a failed connect, a
// server shutting down or starting up) rather than that a query or its data
// was wrong. The HTTP edge answers such errors 503 unavailable: the request
// may succeed when retried, and nothing of it was committed.
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
