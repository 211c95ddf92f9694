package httpx

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// limitBody caps r's body at MaxBodyBytes and, when it has one, gives it
// BodyReadTimeout to arrive, so that a client trickling a body cannot hold
// a connection and a handler. The deadline is set here, per request with a
// body, rather than as http.Server.ReadTimeout: requests without a body
// (WebSocket upgrades among them) never get one, whatever the server does
// with deadlines on hijacked connections, and the timeout reaches handlers
// as a slowBodyError that answers cleanly instead of a raw network error.
// net/http clears the deadline itself once the body has been read (its
// background read starts without one), so a handler may work on longer.
func (e *Edge) limitBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, e.MaxBodyBytes)
	if e.BodyReadTimeout <= 0 || (r.ContentLength == 0 && len(r.TransferEncoding) == 0) {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(e.BodyReadTimeout)) != nil {
		return // not a connection with deadlines (a test recorder)
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, timeout: e.BodyReadTimeout}
}

// deadlineBody turns the body's read timeout into a slowBodyError.
type deadlineBody struct {
	io.ReadCloser
	timeout time.Duration
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = &slowBodyError{timeout: b.timeout, err: err}
	}
	return n, err
}

// slowBodyError is a body that did not arrive within BodyReadTimeout. Its
// text names no address: handlers may answer with it.
type slowBodyError struct {
	timeout time.Duration
	err     error
}

func (e *slowBodyError) Error() string {
	return fmt.Sprintf("request body did not arrive within %s", e.timeout)
}

func (e *slowBodyError) Unwrap() error { return e.err }
