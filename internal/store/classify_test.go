package store

import (
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/agentline/agentline"
	"github.com/jackc/pgx/v5/pgconn"
)

// An error that means the server is unreachable becomes unavailable with a
// Retry-After, wrapped as it comes; any other error is left as it is.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err        error
		code       string
		retryAfter int
	}{
		{fmt.Errorf("get agent: %w", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}), agentline.EUnavailable, unavailableRetry},
		{fmt.Errorf("get agent: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}), agentline.EUnavailable, unavailableRetry},
		{fmt.Errorf("get agent: %w", &pgconn.PgError{Code: "23505", Message: "duplicate key"}), agentline.EInternal, 0},
		{agentline.NotFound("agent"), agentline.ENotFound, 0},
	} {
		got := classify(tc.err)
		var e *agentline.Error
		retry := 0
		if ae, ok := got.(*agentline.Error); ok {
			e, retry = ae, ae.RetryAfter
		}
		if code := agentline.ErrorCode(got); code != tc.code || retry != tc.retryAfter {
			t.Errorf("%v: code %q, Retry-After %d (%+v)", tc.err, code, retry, e)
		}
	}
	if classify(nil) != nil {
		t.Fatal("classify(nil) is not nil")
	}
}
