package fakeserver

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Client is one client's socket on a fake, with what a test waits on: the
// signal that the session's records changed, and how the socket ended.
// It shares the session's lock, so a record and its signal change
// together and a wait never misses one.
type Client struct {
	conn     *websocket.Conn
	mu       sync.Locker // the session's, guarding its records and these
	changed  chan struct{}
	done     chan struct{}
	closeErr error
}

// NewClient wraps a session's accepted socket; mu is the lock the session
// guards its records with.
func NewClient(conn *websocket.Conn, mu sync.Locker) *Client {
	return &Client{conn: conn, mu: mu, changed: make(chan struct{}), done: make(chan struct{})}
}

// Read reads the client's next message into buf. An error ends the
// session (the caller returns, then calls End) and is what CloseStatus
// reports.
func (c *Client) Read(ctx context.Context, buf *bytes.Buffer) error {
	_, r, err := c.conn.Reader(ctx)
	if err != nil {
		c.mu.Lock()
		c.closeErr = err
		c.mu.Unlock()
		return err
	}
	buf.Reset()
	// A message cut short fails the next Reader, which ends the session.
	buf.ReadFrom(r)
	return nil
}

// End marks the session over once its reader has returned.
func (c *Client) End() { close(c.done) }

// ChangedLocked wakes every wait: the session's records changed. The
// session's lock is held.
func (c *Client) ChangedLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Until waits until ready, called with the session's lock held, is true.
func (c *Client) Until(ctx context.Context, ready func() bool) error {
	for {
		c.mu.Lock()
		ok, changed := ready(), c.changed
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-c.done:
			return errors.New("session closed")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Find waits until an item of *list (the session's, read under its lock)
// satisfies match and returns it; each item is looked at once.
func Find[T any](ctx context.Context, c *Client, list *[]T, match func(T) bool) (T, error) {
	var found T
	seen := 0
	err := c.Until(ctx, func() bool {
		for ; seen < len(*list); seen++ {
			if match((*list)[seen]) {
				found = (*list)[seen]
				return true
			}
		}
		return false
	})
	return found, err
}

// Close closes the socket from the server side, as a service does when it
// ends a connection.
func (c *Client) Close(code websocket.StatusCode, reason string) { c.conn.Close(code, reason) }

// Drop cuts the connection without a close handshake.
func (c *Client) Drop() { c.conn.CloseNow() }

// Done is closed once the client has gone.
func (c *Client) Done() <-chan struct{} { return c.done }

// CloseStatus is the close code the client's close frame carried, once
// the session is done: -1 when the socket ended without one (1006).
func (c *Client) CloseStatus() websocket.StatusCode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return websocket.CloseStatus(c.closeErr)
}

// WaitDone waits for the client to go, up to d.
func (c *Client) WaitDone(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
		return true
	case <-t.C:
		return false
	}
}
